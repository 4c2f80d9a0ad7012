"""What the review pass shows the model (a run's record, bounded) and what it makes of the
reply: proposals parsed defensively, and lessons checked against the run's own steps."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from app.models import Run, RunStep
from app.models.knowledge import KnowledgeKind

# The review request's system prompt starts with this: it tells it apart from the agent's
# requests (the scripted model of the tests answers it from a queue of its own).
REVIEW_MARKER = "[workbench:knowledge-review]"
QUESTION_CHARS = 2000
CODE_CHARS = 1500
ERROR_CHARS = 500
OUTPUT_CHARS = 500
ANSWER_CHARS = 1500
INPUT_CHARS = 300
MAX_STEPS = 20
# Most of a reply read for proposals.
REPLY_CHARS = 64_000
KINDS = frozenset(kind.value for kind in KnowledgeKind)

_env = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parents[1] / "agent" / "prompts"),
    undefined=StrictUndefined,
    autoescape=False,
)
_QUOTED_NAME = re.compile(r"""['"]([A-Za-z_][\w .\-]{0,80})['"]""")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


@dataclass(frozen=True)
class Proposal:
    kind: str
    title: str
    body: str


@dataclass(frozen=True)
class Correction:
    """A step failed on `wrong` (a name its error quotes); a later step without it worked."""

    wrong: str
    failed_step: int
    fixed_step: int


def _short(text: str | None, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit] + " […]"


def messages(run: Run, steps: list[RunStep], max_items: int) -> list[dict[str, str]]:
    """The review request: its system prompt (with REVIEW_MARKER) and the run's record."""
    system = _env.get_template("review.j2").render(marker=REVIEW_MARKER, max_items=max_items)
    shown = [
        {
            "index": step.index,
            "code": _short(step.code, CODE_CHARS),
            "error": _short(step.error, ERROR_CHARS),
            "output": _short(step.output, OUTPUT_CHARS),
        }
        for step in steps[-MAX_STEPS:]
    ]

    def noted(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                key: _short(str(value), INPUT_CHARS) if value is not None else None
                for key, value in entry.items()
            }
            for entry in entries[-MAX_STEPS:]
        ]

    inputs = [{"step": "?", "question": "", "answer": "", **e} for e in noted(run.inputs or [])]
    approvals = [
        {"step": "?", "decision": "", "code": None, "feedback": None, **e}
        for e in noted(run.approvals or [])
    ]
    record = _env.get_template("review_run.j2").render(
        question=_short(run.query, QUESTION_CHARS),
        steps=shown,
        inputs=inputs,
        approvals=approvals,
        answer=_short(run.final_answer, ANSWER_CHARS),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": record}]


def _items(text: str) -> list[Any]:
    """The first {"items": [...]} or list in `text`, from left to right (none: [])."""
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("items"), list):
            return list(found["items"])
        if isinstance(found, list):
            return found
    return []


def parse(reply: str, max_items: int) -> list[Proposal]:
    """The proposals in the model's reply: {"items": [...]} (or a bare list), fenced or not,
    with text around it; anything malformed is left out, never an error."""
    items = _items(_FENCE.sub("", (reply or "")[:REPLY_CHARS]).strip())
    proposals: list[Proposal] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind, title, body = item.get("kind"), item.get("title"), item.get("body")
        if not (kind in KINDS and isinstance(title, str) and isinstance(body, str)):
            continue
        if title.strip() and body.strip():
            proposals.append(Proposal(str(kind), title.strip(), body.strip()))
        if len(proposals) >= max_items:
            break
    return proposals


def _uses(code: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", code) is not None


def corrections(steps: list[RunStep]) -> list[Correction]:
    """The corrections the steps show, read from the steps alone: step i failed with an
    error quoting a name its code uses, and a later step whose code differs, no longer uses
    that name, and ran without error."""
    found: list[Correction] = []
    ordered = sorted(steps, key=lambda step: step.index)
    for i, failed in enumerate(ordered):
        if not failed.error or not failed.code:
            continue
        names = {n for n in _QUOTED_NAME.findall(failed.error) if _uses(failed.code, n)}
        for name in sorted(names):
            for later in ordered[i + 1 :]:
                if later.error or not later.code or later.code == failed.code:
                    continue
                if not _uses(later.code, name):
                    found.append(Correction(name, failed.index, later.index))
                    break
    return found


def confirmed(proposal: Proposal, shown: list[Correction]) -> bool:
    """Whether a proposal may be kept: a lesson only if it is about a correction the steps
    show (it names the wrong name); the other kinds come from a run that succeeded."""
    if proposal.kind != KnowledgeKind.lesson:
        return True
    text = f"{proposal.title}\n{proposal.body}".lower()
    return any(correction.wrong.lower() in text for correction in shown)

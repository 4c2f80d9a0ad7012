"""Screening of proposed knowledge: proposals are data, never instructions.

Every item the review pass proposes goes through `screen` before it is stored:
- credentials are scrubbed: the configured secrets (the LLM key, the signing key, …),
  anything shaped like an API key, a bearer token, an access key or a password (in a URL
  or as `password=…`);
- data stays out: at most one line that looks like a row of data is kept, long text is cut;
- text that tries to change the agent's rules, reveal secrets or call tools ("ignore
  previous instructions", "system prompt", `final_answer(`, `import os`, "api key", …)
  is flagged `instructions`, with the reason written at the top of its body: such an item
  is never approved by anyone but a person who read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.agent.calls import redact

TITLE_CHARS = 200
BODY_CHARS = 2000
# A line with this many separated values (and a digit) reads as a row of data.
ROW_CELLS = 3
INSTRUCTIONS = "instructions"

_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@", re.IGNORECASE)
_ASSIGNED = re.compile(
    r"\b(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)(\s*[=:]\s*)"
    r"(['\"]?)[^\s'\",;]{4,}\3",
    re.IGNORECASE,
)
_TOKEN_SHAPES = re.compile(
    r"\b(AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,})"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ROW_SPLIT = re.compile(r"\s*[,;|\t]\s*|\s{2,}")

# What an instruction to the agent reads like, and the reason told for it.
_INSTRUCTION_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(instructions?|rules?|"
            r"prompts?|guidelines)\b",
            re.IGNORECASE,
        ),
        "it tells the agent to set aside its instructions",
    ),
    (re.compile(r"\bsystem\s+prompt\b", re.IGNORECASE), "it mentions the system prompt"),
    (
        re.compile(r"\byou\s+are\s+now\b|\bnew\s+rules?\s*:", re.IGNORECASE),
        "it rewrites the agent's role",
    ),
    (
        re.compile(
            r"\b(reveal|print|show|leak|send)\b[^.\n]{0,40}\b(secrets?|keys?|passwords?|"
            r"credentials?|tokens?|environment)\b",
            re.IGNORECASE,
        ),
        "it asks to reveal secrets",
    ),
    (re.compile(r"\bapi[\s_-]?key\b", re.IGNORECASE), "it mentions an API key"),
    (re.compile(r"\b(final_answer|ask_user)\s*\(", re.IGNORECASE), "it calls the agent's tools"),
    (
        re.compile(
            r"\bimport\s+(os|sys|subprocess|socket|shutil|requests|httpx)\b|"
            r"\b(os\.(environ|system|popen)|subprocess\.|__import__|eval\(|exec\()"
        ),
        "it runs system code",
    ),
)


@dataclass(frozen=True)
class Screened:
    title: str
    body: str
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def scrub(text: str, secrets: list[str | None]) -> str:
    """`text` without credentials (see the module's docstring)."""
    text = redact(_CONTROL.sub("", text), secrets)
    text = _URL_PASSWORD.sub(r"\1[redacted]@", text)
    text = _ASSIGNED.sub(r"\1\2[redacted]", text)
    return _TOKEN_SHAPES.sub("[redacted]", text)


def _looks_like_row(line: str) -> bool:
    cells = [cell for cell in _ROW_SPLIT.split(line.strip()) if cell]
    return len(cells) >= ROW_CELLS and any(ch.isdigit() for ch in line)


def without_rows(text: str) -> str:
    """`text` with at most one line that looks like a row of data (a short example)."""
    kept: list[str] = []
    rows = 0
    for line in text.splitlines():
        if _looks_like_row(line):
            rows += 1
            if rows > 1:
                if rows == 2:
                    kept.append("[rows of data left out]")
                continue
        kept.append(line)
    return "\n".join(kept)


def cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def instruction_reasons(text: str) -> list[str]:
    """Why `text` reads like an instruction to the agent (nothing: it does not)."""
    return [reason for pattern, reason in _INSTRUCTION_SHAPES if pattern.search(text)]


def screen(title: str, body: str, secrets: list[str | None]) -> Screened | None:
    """The item as it may be stored (scrubbed, bounded, flagged), or None when nothing is
    left of it."""
    reasons = instruction_reasons(f"{title}\n{body}")
    title = cut(" ".join(scrub(title, secrets).split()), TITLE_CHARS)
    body = cut(without_rows(scrub(body, secrets)), BODY_CHARS)
    if not title or not body:
        return None
    if not reasons:
        return Screened(title, body)
    note = (
        "[Flagged: this proposal reads like an instruction to the agent, not knowledge ("
        + "; ".join(reasons)
        + "). Read it before approving it.]"
    )
    return Screened(title, cut(f"{note}\n{body}", BODY_CHARS), [INSTRUCTIONS], reasons)

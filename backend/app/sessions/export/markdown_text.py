"""Markdown written from what a session recorded, shared by the notebook's Markdown cells and
the Markdown export: text from the model, the code or the data made inert (it fetches
nothing and adds no structure), a question's heading, a skipped step, a run's outcome, a
table, and dates and sizes in words.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from app.sessions.export.gather import ExportRun, ExportStep

MARKDOWN_TABLE_ROWS = 20


def question_md(run: ExportRun) -> str:
    """A question's heading: its number, its text, the model and when it was asked."""
    return f"## {run.number}. {md_line(run.query)}\n\n*{run.model} · {when(run.created_at)}*"


def skipped_md(step: ExportStep) -> str:
    """A step whose code failed or was rejected: why, its code and its error, as text."""
    why = "rejected by the user" if (step.decision or {}).get("decision") == "reject" else "failed"
    parts = [f"Step {step.index} {why}, so it is not part of the notebook's code:"]
    if step.code:
        parts.append(fence(step.code, "python"))
    if step.error:
        parts.append(fence(step.error, "text"))
    return "\n\n".join(parts)


def outcome_md(run: ExportRun) -> str:
    """How a run ended: its answer, or why it has none, and the checks of its answer."""
    if run.final_answer is not None:
        text = f"**Answer**\n\n{inert_md(run.final_answer)}"
    elif run.status == "cancelled":
        text = "*This question was stopped before it had an answer.*"
    elif run.status in ("succeeded", "failed") or run.error:
        text = f"**The run failed:** {md_line(run.error or 'no answer')}"
    else:
        text = f"*Not finished when exported ({run.status}).*"
    for check in run.verifications:
        text += f"\n\n*Check: {check.get('verdict')} — {md_line(str(check.get('reason', '')))}*"
    return text


def markdown_table(table: dict[str, Any], limit: int = MARKDOWN_TABLE_ROWS) -> str:
    columns = [str(c) for c in table.get("columns", [])]
    rows = table.get("rows", [])[:limit]

    def cell(value: Any) -> str:
        text = "" if value is None else inert_md(str(value))
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(cell(c) for c in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    total = int(table.get("row_count", len(rows)))
    if total > len(rows):
        lines.append(f"\n*{len(rows):,} of {total:,} rows*")
    return "\n".join(lines)


def fence(text: str, language: str) -> str:
    """A fenced code block longer than any run of backticks in `text`."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def inert_md(text: str) -> str:
    """Markdown from the model (or from data it read) that fetches nothing when shown.

    Jupyter and most Markdown viewers load images as soon as a document opens, so a
    `![x](https://…?data)` or an `<img src=…>` would send data to any server. Every image
    becomes plain text and a link (`!` as an entity: nothing starts an image), and every
    raw HTML tag shows as text; the rest of the Markdown renders as written.
    """
    text = text.replace("![", "&#33;[")
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def md_line(text: str) -> str:
    """Text from the model or the user on one Markdown line, with nothing that acts as
    Markdown structure or raw HTML."""
    flat = " ".join(text.split())
    return re.sub(r"([\\`*_{}\[\]<>#|])", r"\\\1", flat)


def when(moment: datetime) -> str:
    """A moment as exports show it, to the minute in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def human_size(size: int) -> str:
    """A byte count in bytes, KB, MB or GB."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{size} bytes"

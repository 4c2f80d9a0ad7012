"""Markdown written from what a session recorded, shared by the notebook's Markdown cells and
the Markdown export: text from the model, the code or the data made inert (it fetches
nothing and adds no structure), a question's heading, a skipped step, a run's outcome and
summary, a table with its numbers written for reading, and dates and sizes in words.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

from app.sessions.export.gather import ExportRun, ExportStep

MARKDOWN_TABLE_ROWS = 20


def question_md(run: ExportRun) -> str:
    """A question's heading: its number, its text, the model and when it was asked."""
    return f"## {run.number}. {md_line(run.query)}\n\n*{run.model} · {when(run.created_at)}*"


def skipped_md(step: ExportStep) -> str:
    """A step none of whose code ran (rejected, or failed before any of it ran): why, its
    code and its error, as text."""
    why = "was rejected by the user" if step.rejected else "failed before any of its code ran"
    parts = [f"Step {step.index} {why}, so it is not part of the notebook's code:"]
    if step.code:
        parts.append(fence(step.code, "python"))
    if step.error:
        parts.append(fence(step.error, "text"))
    return "\n\n".join(parts)


def query_caption(query: dict[str, Any]) -> str:
    """What a query came to, in words: its source, its rows and time, or its error."""
    source = str(query.get("source") or "")
    rows, ms = int(query.get("rows") or 0), int(query.get("duration_ms") or 0)
    if query.get("error"):
        return f"on {source}, failed after {ms:,} ms: {query['error']}"
    return f"on {source}: {_plural(rows, 'row')} in {ms:,} ms"


def queries_md(step: ExportStep) -> str:
    """The queries a step's code ran on data sources, each as its SQL and what it came to."""
    parts = []
    for query in step.queries:
        parts.append(f"*Query {md_line(query_caption(query))}*")
        parts.append(fence(str(query.get("sql") or ""), "sql"))
    return "\n\n".join(parts)


def revision_md(step: ExportStep) -> str:
    """A check of the answer step `step` gave that sent the agent back to work."""
    reason = md_line(step.revision or "")
    said = f": {reason}" if reason else ""
    return f"*The check of this answer asked for a revision{said}. The agent went on.*"


def outcome_md(run: ExportRun) -> str:
    """How a run ended: its answer, or why it has none, the check of its answer and what
    its steps came to."""
    if run.final_answer is not None:
        text = f"**Answer**\n\n{inert_md(run.final_answer)}"
    elif run.is_cell and run.status == "succeeded":
        text = "*A cell: its output above is what it gave.*"
    elif run.stopped:
        text = "*Stopped by the user before it had an answer.*"
    elif run.status in ("succeeded", "failed") or run.error:
        text = f"**The run failed:** {md_line(run.error or 'no answer')}"
    else:
        text = f"*Not finished when exported ({run.status.replace('_', ' ')}).*"
    if run.verdict:
        text += f"\n\n*Attempts: {md_line(run.verdict)}*"
    if (check := check_sentence(run)) is not None:
        text += f"\n\n*{md_line(check)}*"
    if shaped := shaped_by_md(run):
        text += f"\n\n{shaped}"
    if summary := steps_summary(run):
        text += f"\n\n*{summary}*"
    return text


def shaped_by_md(run: ExportRun) -> str:
    """The team's knowledge items the agent was given ("Shaped by: …"), those it relied on
    marked, or "" when it was given none."""
    if not run.knowledge:
        return ""
    titles = [
        f"**{md_line(str(k.get('title', '')))}**" + (" (relied on)" if k.get("used") else "")
        for k in run.knowledge
    ]
    return f"*Shaped by:* {', '.join(titles)}"


def check_sentence(run: ExportRun) -> str | None:
    """The check of the answer in words: "Checked: …", or the doubts the answer stands with."""
    check = run.answer_check
    if check is None:
        return None
    reason = str(check.get("reason") or "").strip()
    said = "Checked" if check.get("verdict") == "approve" else "The check still has doubts"
    return f"{said}: {reason}" if reason else f"{said}."


def steps_summary(run: ExportRun) -> str:
    """What a run's steps came to, in words: "4 steps · 1 fixed error · 2 errors · stopped".

    An error counts as fixed only when a later step of the same run ran without one; the
    step a stopped run was stopped in is not an error; a rejected step is not an error
    either, and a check's request to revise an answer is neither.
    """
    steps = run.steps
    stopped = steps[-1] if run.stopped and steps and steps[-1].error else None
    failed = [s for s in steps if s.failed and not s.rejected and s is not stopped]
    fixed = sum(
        1
        for s in failed
        if any(t.index > s.index and (t.error is None or t.revision is not None) for t in steps)
    )
    rejected = sum(1 for s in steps if s.rejected)
    count = max(run.step_count, len(steps))
    parts = [
        _plural(count, "step") if count else "",
        _plural(fixed, "fixed error") if fixed else "",
        _plural(len(failed) - fixed, "error") if len(failed) > fixed else "",
        f"{rejected} rejected" if rejected else "",
        "stopped" if run.stopped else "",
    ]
    return " · ".join(p for p in parts if p)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def markdown_table(table: dict[str, Any], limit: int = MARKDOWN_TABLE_ROWS) -> str:
    columns = [str(c) for c in table.get("columns", [])]
    rows, numeric = readable_rows(table, limit)

    def cell(text: str) -> str:
        return inert_md(text).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(cell(c) for c in columns) + " |",
        "|" + "".join("--:|" if n else "---|" for n in numeric),
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    total = int(table.get("row_count", len(rows)))
    if total > len(rows):
        lines.append(f"\n*{len(rows):,} of {total:,} rows*")
    return "\n".join(lines)


# Integer columns written without thousands separators: years, ids, codes.
_PLAIN_NUMBERS = re.compile(
    r"(?:^|[^a-z])(?:id|year|yr|code|zip|postcode|phone|number|no)s?$", re.I
)


def readable_rows(table: dict[str, Any], limit: int) -> tuple[list[list[str]], list[bool]]:
    """A table's first `limit` rows as text, numbers written for reading, and which columns
    are numbers (to align them right).

    Per column: whole numbers with thousands separators (1,234; not years and ids), other
    numbers to two decimals (65.93), or to two significant digits when all are below one
    (0.0042); empty cells stay empty.
    """
    columns = [str(c) for c in table.get("columns", [])]
    rows = [list(r) for r in table.get("rows", [])[:limit]]
    width = max([len(columns)] + [len(r) for r in rows])
    numeric = []
    for index in range(width):
        values = [r[index] for r in rows if index < len(r) and not _empty(r[index])]
        name = columns[index] if index < len(columns) else ""
        writer = _number_writer(values, name)
        numeric.append(writer is not None)
        for row in rows:
            if index < len(row):
                value = row[index]
                row[index] = "" if _empty(value) else writer(value) if writer else _text(value)
    return [[str(v) for v in r] for r in rows], numeric


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _number_writer(values: list[Any], name: str) -> Any:
    """How to write the numbers of a column, or None when it is not all numbers."""
    if not values or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        return None
    separators = "," if not _PLAIN_NUMBERS.search(name.strip()) else ""
    if all(float(v).is_integer() and abs(v) < 1e15 for v in values):
        return lambda v: format(int(v), separators + "d")
    smallest = min((abs(v) for v in values if v), default=1.0)
    decimals = 2 if smallest >= 1 else min(6, max(2, 1 - math.floor(math.log10(smallest))))
    return lambda v: format(float(v), f"{separators}.{decimals}f")


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

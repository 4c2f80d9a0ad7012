"""Each column's kind decided over all of a file's cells, not only over its head's.

A preview is built from the head of a file (table.CSV_TYPE_ROWS rows of a CSV,
table.SHEET_TYPE_ROWS of a worksheet) so that it shows at once. The whole file is then
checked here, off the request path, in the preview child process: a CSV in one streaming
pass of DuckDB that counts, per column, the cells its head's reading cannot read (never
holding the file; a second pass only for the columns that turn mixed), a worksheet read
whole as its preview reads its head. The decision is kept beside the file (`kinds_path`)
and replaces the head's for every later page, sort, filter, typed copy and the agent's
description (app.files.previewing), so that one decision holds per file version.

What the whole file can change: a number, date or yes/no column some of whose later cells
do not read so becomes a mixed column (those cells kept as text, marked) while MOST of its
cells still read, else text, with a sentence saying why; a date column takes the other
day/month order when that order reads more of its cells (its only day-first date may lie
past the head). Text stays text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

from app.files.mixed_columns import MOST, MixedReading
from app.files.preview.csv_sql import present, typed_sql
from app.files.preview.kinds import preview_kind
from app.files.preview.paging import Window, connect, read_csv_fields, read_page
from app.files.preview.table import head_note, user_type
from app.files.preview.workbook import preview_excel

# Changes when what a decision holds changes, so that older ones are not read.
_SHAPE = 1
_WORDS = {"number": "numbers", "date": "dates", "yes/no": "yes or no"}
# The strict date formats whose day and month can be read the other way round.
_SWAPPABLE = re.compile(r"%([dm])([/.-])%([dm])\2%Y(.*)")


def kinds_path(shown: dict[str, Any], work: Path) -> Path:
    """Where the whole file's decision for a preview of its head is kept (one per way of
    reading it: sheet, header row, separators, the head's column types)."""
    reading = {key: shown.get(key) for key in ("columns", "format", "header_row", "sheet")}
    text = json.dumps([_SHAPE, reading], sort_keys=True, default=str)
    return Path(f"{work}.kinds.{hashlib.sha256(text.encode()).hexdigest()[:24]}.json")


def stored_decision(shown: dict[str, Any], work: Path) -> dict[str, Any] | None:
    """The whole file's decision for a preview of its head, if it was made."""
    try:
        found = json.loads(kinds_path(shown, work).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and "columns" in found else None


def settled(shown: dict[str, Any], decision: dict[str, Any]) -> dict[str, Any]:
    """The preview of a head with the whole file's decision in place of its own."""
    return shown | {
        "columns": decision["columns"],
        "rows": decision["rows"],
        "decided_rows": decision.get("decided_rows", shown["row_count"]),
        "kinds_pending": False,
    }


def keep_head(shown: dict[str, Any], work: Path) -> None:
    """Keeps the head's decision as the file's when the whole file could not be checked
    (too costly, or unreadable past its head), so that it is not checked again and again;
    its columns say over how many rows they were decided."""
    rows = int(shown.get("decided_rows") or 0)
    columns = [
        column
        | {"reading": column["reading"].replace(head_note(rows), f"over the first {rows:,} rows")}
        if isinstance(column.get("reading"), str)
        else column
        for column in shown["columns"]
    ]
    _keep(shown, work, {"columns": columns, "rows": shown["rows"], "decided_rows": rows})


def decide_whole(path: Path, *, name: str, shown: dict[str, Any], work: Path) -> dict[str, Any]:
    """Decides each column's kind over the whole file and keeps the decision at
    `kinds_path` (made once). Runs in the preview child process.

    Args:
        path: The local file (a CSV or a workbook).
        name: Its user-facing name (its extension gives the kind).
        shown: The preview of its head (of the sheet and header row meant).
        work: The path prefix of what pages keep beside the file.

    Returns:
        `{columns, rows}`: the columns as the whole file reads them, and the first rows
        shown so.
    """
    found = stored_decision(shown, work)
    if found is not None:
        return found
    if preview_kind(name) == "excel":
        whole = preview_excel(
            path, name, shown.get("sheet"), shown.get("header_row"), type_rows=None
        )
        decision = {"columns": whole.columns, "rows": whole.rows}
    else:
        columns = read_csv_fields(
            path, shown, work, lambda readable, source, _: _decide_csv(readable, source, shown)
        )
        first = read_page(
            path, name=name, shown=shown | {"columns": columns}, window=Window(), work=work
        )
        decision = {"columns": columns, "rows": first["rows"]}
    _keep(shown, work, decision)
    return decision


def _keep(shown: dict[str, Any], work: Path, decision: dict[str, Any]) -> None:
    target = kinds_path(shown, work)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.part")
    try:
        partial.write_text(json.dumps(decision, default=str))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _decide_csv(readable: Path, source: str, shown: dict[str, Any]) -> list[dict[str, Any]]:
    """The columns of a CSV as all its cells read them (see the module's docstring)."""
    columns: list[dict[str, Any]] = shown["columns"]
    text_format: dict[str, Any] = shown.get("format") or {}
    head_rows = int(shown.get("decided_rows") or 0)
    checked = {
        at: (typed_sql(f"c{at}", column, text_format), _other_order(column, at, text_format))
        for at, column in enumerate(columns)
        if user_type(column.get("dtype", "")) != "text"
    }
    counts = _count(readable, source, len(columns), checked)
    final = [dict(column) for column in columns]
    candidates: dict[int, dict[str, Any]] = {}
    for at, found in counts.items():
        column = final[at]
        if found["other_unread"] is not None and found["other_unread"] < found["unread"]:
            column = final[at] = _flipped(column, found["example"])
            found["unread"] = found["other_unread"]
        if not found["unread"] or column.get("mixed"):
            final[at] = _judged(column, found, head_rows)
        elif user_type(column.get("dtype", "")) in ("number", "date"):
            candidates[at] = _as_mixed(column, text_format)
        else:
            final[at] = _as_text(column, found, head_rows)
    # A strict column with cells it cannot read is counted again read as a mixed one,
    # which reads amounts and dates in more spellings.
    again: dict[int, tuple[str, str | None]] = {
        at: (typed_sql(f"c{at}", column, text_format), None) for at, column in candidates.items()
    }
    for at, found in _count(readable, source, len(columns), again).items():
        final[at] = _judged(candidates[at], found, head_rows)
    return final


def _count(
    readable: Path, source: str, width: int, checked: dict[int, tuple[str, str | None]]
) -> dict[int, dict[str, Any]]:
    """Per column checked, in one pass over the file: its filled cells, those its reading
    cannot read, those the other day/month order cannot read, and a text only that order
    reads."""
    if not checked:
        return {}
    parts = []
    for at, (expr, other) in checked.items():
        filled = f"trim({present(f'c{at}')}) <> ''"
        parts += [
            f"count(*) FILTER (WHERE {filled})",
            f"count(*) FILTER (WHERE {filled} AND ({expr}) IS NULL)",
        ]
        if other is None:
            parts += ["NULL", "NULL"]
        else:
            parts += [
                f"count(*) FILTER (WHERE {filled} AND ({other}) IS NULL)",
                f"min(trim(c{at})) FILTER (WHERE {filled} AND ({expr}) IS NULL"
                f" AND ({other}) IS NOT NULL)",
            ]
    fields = ", ".join(f"c{i}" for i in range(width))
    con = connect(readable)
    try:
        row = con.execute(f"SELECT {', '.join(parts)} FROM ({source}) AS s({fields})").fetchone()
    finally:
        con.close()
    assert row is not None
    found = {}
    for n, at in enumerate(checked):
        filled, unread, other_unread, example = row[4 * n : 4 * n + 4]
        found[at] = {
            "filled": int(filled),
            "unread": int(unread),
            "other_unread": None if other_unread is None else int(other_unread),
            "example": example,
        }
    return found


def _other_order(column: dict[str, Any], at: int, text_format: dict[str, Any]) -> str | None:
    """The SQL that reads a date column's field with day and month the other way round,
    when the head did not settle its order; None for other columns."""
    if column.get("mixed") == "date":
        if column.get("settled_by"):
            return None
        return typed_sql(f"c{at}", column | {"day_first": not column.get("day_first")}, text_format)
    swapped = _swapped(column.get("date_format"))
    if swapped is None or not str(column.get("dtype", "")).startswith("datetime64"):
        return None
    return typed_sql(f"c{at}", column | {"date_format": swapped}, text_format)


def _swapped(date_format: Any) -> str | None:
    found = _SWAPPABLE.fullmatch(date_format) if isinstance(date_format, str) else None
    if found is None or found[1] == found[3]:
        return None
    return f"%{found[3]}{found[2]}%{found[1]}{found[2]}%Y{found[4]}"


def _flipped(column: dict[str, Any], example: Any) -> dict[str, Any]:
    """A date column read with day and month the other way round, settled by `example`."""
    if column.get("mixed") == "date":
        return column | {"day_first": not column.get("day_first"), "settled_by": example}
    date_format = _swapped(column.get("date_format")) or ""
    order = "day-first" if date_format.startswith("%d") else "month-first"
    return column | {"date_format": date_format, "reading": f"dates read {order} (from {example})"}


def _as_mixed(column: dict[str, Any], text_format: dict[str, Any]) -> dict[str, Any]:
    """A strict number or date column read as a mixed one (its unreadable cells marked)."""
    spec = {key: value for key, value in column.items() if key not in ("date_format", "reading")}
    if user_type(column.get("dtype", "")) == "date":
        day_first = str(column.get("date_format") or "").startswith("%d")
        return spec | {"mixed": "date", "day_first": day_first, "settled_by": None}
    decimal = column.get("decimal") or text_format.get("decimal") or "."
    return spec | {"mixed": "number", "decimal_separator": decimal}


def _judged(column: dict[str, Any], found: dict[str, Any], head_rows: int) -> dict[str, Any]:
    """A column as the whole file's counts of it decide: as it is, or text when too few of
    its cells read as its kind."""
    unread, filled = found["unread"], found["filled"]
    if unread > (1 - MOST) * filled:
        return _as_text(column, found, head_rows)
    if not column.get("mixed"):
        return column
    reading = MixedReading(
        str(column["mixed"]),
        decimal=str(column.get("decimal_separator") or "."),
        day_first=bool(column.get("day_first")),
        settled_by=column.get("settled_by"),
    )
    return column | {"unreadable": unread, "reading": reading.describe(unread)}


def _as_text(column: dict[str, Any], found: dict[str, Any], head_rows: int) -> dict[str, Any]:
    """A column read as text, with the sentence that says why."""
    words = _WORDS.get(user_type(column.get("dtype", "")), "readable")
    after = found["unread"] - int(column.get("unreadable") or 0)
    cells = after if after > 0 else found["unread"]
    verb = "is" if cells == 1 else "are"
    where = f" after row {head_rows:,}" if after > 0 and head_rows else ""
    reading = f"text: {cells:,} cell{'s' if cells != 1 else ''}{where} {verb} not {words}"
    return {"name": column["name"], "dtype": "str", "reading": reading}

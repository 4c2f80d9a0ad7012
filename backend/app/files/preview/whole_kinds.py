"""Each column's kind decided over all of a file's cells, not only over its head's.

A preview is built from the head of a file (table.CSV_TYPE_ROWS rows of a CSV,
table.SHEET_TYPE_ROWS of a worksheet) so that it shows at once. The whole file is then
checked here, off the request path, in the preview child process: a CSV in a few
streaming passes of DuckDB that count its columns' cells (whole_csv.py: never holding the
file), a JSON lines file record by record in batches (whole_jsonl.py), a worksheet read
whole as its preview reads its head. The decision is kept beside the file (`kinds_path`)
and replaces the head's for every later page, sort, filter, typed copy and the agent's
description (app.files.previewing), so that one decision holds per file version.

What the whole file decides: each column's kind (a column that is text in its first rows
becomes numbers or dates when nearly all its cells read so, and one whose later cells do
not read as its head's kind becomes mixed or text), its day/month order, the texts read as
missing in it, and a column of amounts' currencies and decimals (whole_csv.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

from app.files.preview.kinds import preview_kind
from app.files.preview.paging import Window, read_csv_fields, read_page
from app.files.preview.table import head_note
from app.files.preview.whole_csv import decide_csv
from app.files.preview.whole_jsonl import decide_jsonl, first_rows
from app.files.preview.workbook import preview_excel

# Changes when what a decision holds changes, so that older ones are not read.
_SHAPE = 2


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
        path: The local file (a CSV, a JSON lines file or a workbook).
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
    elif preview_kind(name) == "jsonl":
        columns = decide_jsonl(path, name, shown)
        decision = {"columns": columns, "rows": first_rows(path, name, columns)}
    else:
        columns = read_csv_fields(
            path, shown, work, lambda readable, source, _: decide_csv(readable, source, shown)
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

"""A workbook's sheet or a JSON table read whole, each column as the preview of its head
reads it, kept beside the file as Parquet for paging.py to page, sort and filter.

The head decided each column's type once; the whole table is read with that same
decision (a mixed column with the head's date order and decimal separator, a number or
date column whose later cells are text read cell by cell), so that every page shows a
column the same way. Columns are stored as `c<i>`, and the text of a mixed column's
cells that could not be read as `u<i>`.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pandas as pd

from app.files.detect import Detected, convert_text
from app.files.mixed_columns import apply_reading
from app.files.preview.json_tables import read_json_lines, read_json_table
from app.files.preview.kinds import preview_kind
from app.files.preview.table import jsonable, user_type
from app.files.preview.workbook import open_worksheet

# Changes when what a kept table holds changes, so that older ones are not read.
_SHAPE = 3


def whole_table(path: Path, name: str, shown: dict[str, Any], work: Path) -> Path:
    """The table read whole as `shown` (its head's preview) says, as Parquet (made once per
    sheet, header row and reading)."""
    sheet, header_row = shown.get("sheet"), int(shown.get("header_row") or 0)
    columns = shown["columns"]
    digest = uuid.uuid5(uuid.NAMESPACE_OID, json.dumps([_SHAPE, columns], default=str)).hex
    tag = f"{sheet}\n{header_row}".encode().hex()[:200]
    target = Path(f"{work}.{tag}.{digest[:16]}.parquet")
    if target.exists():
        return target
    kind = preview_kind(name)
    if kind == "excel":
        _, chosen = open_worksheet(path, name, sheet)
        raw = pd.read_excel(path, sheet_name=chosen.name, header=header_row)
    elif kind == "json":
        raw = read_json_table(path, name)
    else:
        with path.open("rb") as file:
            raw = pd.json_normalize(read_json_lines(file, name, 1 << 62))
    result = read_as(raw, columns)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.part")
    try:
        result.to_parquet(partial, index=False)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def read_as(raw: pd.DataFrame, columns: list[dict[str, Any]]) -> pd.DataFrame:
    """A table's cells read as a preview's `columns` say: columns `c<i>`, and `u<i>` the
    text of each cell of column i that could not be read as its kind (its mixed reading;
    a text the column lists as read as missing is missing, not marked). A column read as
    text holds text, its numbers as JSON writes them."""
    raw.columns = [str(column) for column in raw.columns]
    frame = convert_text(raw.copy(), Detected(), day_first=False)
    table: dict[str, Any] = {}
    marks: dict[str, Any] = {}
    for at, (column, spec) in enumerate(zip(frame.columns, columns, strict=False)):
        values = frame[column]
        wanted = user_type(spec.get("dtype", ""))
        if spec.get("mixed") or (
            wanted in ("number", "date") and user_type(values.dtype) != wanted
        ):
            reading = spec if spec.get("mixed") else _implied(wanted, spec)
            values, unread = apply_reading(raw[column], reading)
            listed = {
                entry.get("value")
                for entry in spec.get("missing_values") or []
                if isinstance(entry, dict)
            }
            unread = {row: text for row, text in unread.items() if text not in listed}
            marks[f"u{at}"] = pd.Series(unread, dtype=object).reindex(values.index)
        elif wanted == "text" and (
            values.dtype != object or not values.dropna().map(lambda v: isinstance(v, str)).all()
        ):
            # Lists, objects, numbers and mixed cells of a text column are kept as their
            # JSON text.
            values = raw[column].map(_as_text)
        table[f"c{at}"] = values
    # The extra columns of a wider table than its head's keep their places: paging.py
    # counts them and says so.
    for at, column in enumerate(frame.columns[len(columns) :], start=len(columns)):
        table[f"c{at}"] = frame[column].map(_as_text)
    result = pd.DataFrame(table) if table else pd.DataFrame(index=frame.index)
    for key, values in marks.items():
        result[key] = values.map(lambda v: v if isinstance(v, str) else None)
    return result


def _implied(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The mixed reading of a number or date column whose later cells the head's strict
    reading does not fit."""
    day_first = str(spec.get("date_format") or "").startswith("%d")
    return {"mixed": kind, "day_first": day_first, "decimal_separator": spec.get("decimal") or "."}


def stored_marks(table: Path, width: int) -> list[str | None]:
    """Per column of a kept table, its column of unreadable cells' texts, if it has one."""
    import pyarrow.parquet as pq

    names = set(pq.read_schema(table).names)
    return [f"u{at}" if f"u{at}" in names else None for at in range(width)]


def _as_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, str):
        return value
    return json.dumps(jsonable(value), ensure_ascii=False)

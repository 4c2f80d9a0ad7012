"""What a preview is and how one is built from a parsed table: its columns with dtypes,
their types in a person's words (number, date, text, yes/no) and how text was read into
them, its first rows made JSON-safe (dates at midnight shown as dates), and the row count
of the whole file.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from app.files.detect import Detected

PREVIEW_ROWS = 50
INFER_ROWS = 1000
# The rows of a CSV's head, and of a worksheet, whose cells decide each column's type at
# first (all of them in a smaller file). More costs the head of a big CSV seconds (the
# readings of detect.py are regular expressions); the whole file is checked after, off the
# request path (whole_kinds.py), and its decision replaces the head's.
CSV_TYPE_ROWS = 10_000
SHEET_TYPE_ROWS = 20_000

UserType = Literal["number", "date", "text", "yes/no"]


@dataclass(frozen=True)
class Preview:
    """What `GET /files/{id}/preview` returns.

    Attributes:
        columns: `{name, dtype}` each, plus `date_format` for a text column read as dates.
        rows: The first rows, JSON-safe.
        row_count: The data rows of the whole file (or sheet).
        sheets: A workbook's worksheets in order; None for other kinds.
        sheet: The worksheet previewed; None for other kinds.
        format: How a delimited text file was read (`delimiter`, `decimal`, `thousands`,
            `encoding`); None for other kinds.
        header_row: The row (0-based, blank lines of a text file not counted) that holds
            the column names of a CSV or a worksheet; None for other kinds.
        decided_rows: The rows each column's kind was decided over.
        kinds_pending: Whether the kinds were decided over the first rows only and the
            whole file is still to be checked (whole_kinds.py).
    """

    columns: list[dict[str, Any]]
    rows: list[list[Any]]
    row_count: int
    sheets: list[str] | None = None
    sheet: str | None = None
    format: dict[str, str | None] | None = None
    header_row: int | None = None
    decided_rows: int | None = None
    kinds_pending: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Returns the JSON body."""
        return {
            "columns": self.columns,
            "rows": self.rows,
            "row_count": self.row_count,
            "sheets": self.sheets,
            "sheet": self.sheet,
            "format": self.format,
            "header_row": self.header_row,
            "decided_rows": self.decided_rows,
            "kinds_pending": self.kinds_pending,
        }


def build_preview(
    frame: pd.DataFrame,
    row_count: int,
    *,
    detected: Detected | None = None,
    text_format: dict[str, str | None] | None = None,
    header_row: int | None = None,
    checked_later: bool = False,
) -> Preview:
    """The preview of a parsed table: its columns and first rows, with the given row count.

    Args:
        frame: The table as read, its text columns converted (see app.files.detect).
        row_count: The data rows of the whole file or sheet.
        detected: What the conversions found: each converted column says how it was read.
        text_format: How a delimited text file was read.
        header_row: The row the column names came from (CSV and worksheets).
        checked_later: Whether the whole file's cells decide the kinds after, when `frame`
            holds only its first rows (CSV and worksheets: whole_kinds.py).
    """
    found = detected or Detected()
    partial = len(frame) < row_count
    pending = checked_later and partial
    columns = []
    for col, dtype in frame.dtypes.items():
        name = str(col)
        column: dict[str, Any] = {"name": name, "dtype": str(dtype)}
        if name in found.date_formats:
            column["date_format"] = found.date_formats[name]
        if name in found.units:
            written = found.units[name]
            column["unit"] = written.unit
            if written.decimal_comma:
                column["decimal"] = ","
            if written.unit is not None:
                column["decimals"] = written.decimals
            if written.unit not in (None, "%"):
                column["currency"] = written.unit
        if name in found.yes_no:
            column["true_values"], column["false_values"] = found.yes_no[name]
        if name in found.mixed:
            column |= found.mixed[name].spec()
            if pending:
                column["reading"] += f" ({head_note(len(frame))})"
            elif partial:
                column["reading"] += f" (over the first {len(frame):,} rows)"
        columns.append(column)
    rows = shown_rows(frame.head(PREVIEW_ROWS), found)
    return Preview(
        columns,
        rows,
        row_count,
        format=text_format,
        header_row=header_row,
        decided_rows=len(frame) if checked_later else None,
        kinds_pending=pending,
    )


def head_note(rows: int) -> str:
    """What a column read from the head of a file says while the whole file is checked."""
    return f"decided over the first {rows:,} rows; checking the whole file…"


def shown_rows(frame: pd.DataFrame, found: Detected) -> list[list[Any]]:
    """The rows of a table as shown: JSON-safe cells, and each cell of a mixed column that
    could not be read as its text, marked (`{"unreadable": text}`)."""
    rows = [[cell(value) for value in row] for row in frame.itertuples(index=False, name=None)]
    for at, name in enumerate(frame.columns):
        reading = found.mixed.get(str(name))
        if reading is None or not reading.unreadable:
            continue
        for position, label in enumerate(frame.index):
            if label in reading.unreadable:
                rows[position][at] = unreadable(reading.unreadable[label])
    return rows


def unreadable(text: str) -> dict[str, str]:
    """A cell whose text could not be read as its column's kind, as the API carries it."""
    return {"unreadable": text}


def user_type(dtype: Any) -> UserType:
    """A column's type in a person's words (number, date, text or yes/no), from its pandas
    dtype or the dtype's name."""
    name = str(dtype)
    if name in ("bool", "boolean"):
        return "yes/no"
    if name.startswith(("int", "uint", "float", "Int", "UInt", "Float")):
        return "number"
    if name.startswith("datetime64"):
        return "date"
    return "text"


def cell(value: Any) -> Any:
    """A table cell as shown: JSON-safe (see `jsonable`), a date at midnight as a date."""
    if isinstance(value, np.datetime64) and not np.isnat(value):
        value = pd.Timestamp(value)
    if (
        value is not pd.NaT
        and isinstance(value, dt.datetime)
        and value.tzinfo is None
        and value.time() == dt.time()
        and not (isinstance(value, pd.Timestamp) and value.nanosecond)
    ):
        return value.date().isoformat()
    return jsonable(value)


def jsonable(value: Any) -> Any:
    """Turns a cell into a JSON-safe python value: missing and non-finite become None."""
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.datetime64 | np.timedelta64):
        scalar = pd.Timestamp(value) if isinstance(value, np.datetime64) else pd.Timedelta(value)
        return jsonable(scalar)
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [jsonable(item) for item in value]
    return str(value)  # Decimal, Timedelta, ...

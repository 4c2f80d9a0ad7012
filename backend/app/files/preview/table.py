"""What a preview is and how one is built from a parsed table: its columns with dtypes
(and date formats), its first rows made JSON-safe, and the row count of the whole file.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

PREVIEW_ROWS = 50
INFER_ROWS = 1000


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
    """

    columns: list[dict[str, str]]
    rows: list[list[Any]]
    row_count: int
    sheets: list[str] | None = None
    sheet: str | None = None
    format: dict[str, str | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Returns the JSON body."""
        return {
            "columns": self.columns,
            "rows": self.rows,
            "row_count": self.row_count,
            "sheets": self.sheets,
            "sheet": self.sheet,
            "format": self.format,
        }


def build_preview(
    frame: pd.DataFrame,
    row_count: int,
    *,
    dates: dict[str, str] | None = None,
    text_format: dict[str, str | None] | None = None,
) -> Preview:
    """The preview of a parsed table: its columns and first rows, with the given row count."""
    columns = []
    for col, dtype in frame.dtypes.items():
        column = {"name": str(col), "dtype": str(dtype)}
        if dates and str(col) in dates:
            column["date_format"] = dates[str(col)]
        columns.append(column)
    head = frame.head(PREVIEW_ROWS).itertuples(index=False, name=None)
    rows = [[jsonable(value) for value in row] for row in head]
    return Preview(columns, rows, row_count, format=text_format)


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

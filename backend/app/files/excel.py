"""Tables as Excel workbooks, for the "Excel" download of a table or a CSV the code wrote.

The conversion runs in the preview child process (app.files.preview_process), within its
time and memory limits: the CSV came out of sandboxed code and is as untrusted as an upload.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell

# An Excel sheet holds at most this many rows (the header included).
EXCEL_MAX_ROWS = 1_048_576
# Larger sources are refused up front: converting costs several times their size in memory.
MAX_SOURCE_BYTES = 64 * 1024 * 1024


class TooLargeForExcel(Exception):
    pass


def to_xlsx(source: Path, target: Path, *, sheet: str, from_json: bool = False) -> int:
    """Write the table at `source` (a CSV, or a table preview's JSON) as one sheet of an
    .xlsx at `target`. Returns the number of data rows."""
    if from_json:
        table = json.loads(source.read_text(encoding="utf-8"))
        frame = pd.DataFrame(table["rows"], columns=table["columns"])
    else:
        frame = pd.read_csv(source, low_memory=False)
    if len(frame) >= EXCEL_MAX_ROWS:
        raise TooLargeForExcel(
            f"{len(frame):,} rows are more than an Excel sheet holds "
            f"({EXCEL_MAX_ROWS - 1:,}); download the CSV instead."
        )
    workbook = Workbook(write_only=True)
    worksheet = workbook.create_sheet(_sheet_name(sheet))
    worksheet.append([str(c) for c in frame.columns])
    for row in frame.itertuples(index=False, name=None):
        worksheet.append([_cell(worksheet, value) for value in row])
    workbook.save(target)
    return len(frame)


def _cell(worksheet: Any, value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.tz_localize(None).to_pydatetime() if value.tzinfo else value.to_pydatetime()
    if isinstance(value, str) and value.startswith("="):
        # Text, never a formula: a table's cells are data (and may come from hostile files).
        cell = WriteOnlyCell(worksheet, value=value)
        cell.data_type = "s"
        return cell
    if isinstance(value, (str, int, float, bool, datetime, date)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def _sheet_name(name: str) -> str:
    cleaned = re.sub(r"[\\/*?:\[\]]", " ", name).strip("' ")[:31]
    return cleaned or "Table"

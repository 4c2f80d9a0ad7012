"""Tables as Excel workbooks and as CSV, for the downloads of a table or a CSV the code wrote.

The conversion runs in the preview child process (app.files.preview_process), within its
time and memory limits: the CSV came out of sandboxed code and is as untrusted as an upload.

Both kinds of download are escaped against spreadsheet (CSV) injection as OWASP advises: a
text cell, header or data, that begins with = + - @ tab or carriage return gets a single
quote in front, so a spreadsheet shows it as text and never runs it as a formula (such as
a HYPERLINK that sends a neighbouring cell to a URL). Numbers stay numbers.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any, TextIO

import pandas as pd
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell

# An Excel sheet holds at most this many rows (the header included).
EXCEL_MAX_ROWS = 1_048_576
# Larger sources are refused up front: converting costs several times their size in memory.
MAX_SOURCE_BYTES = 64 * 1024 * 1024


# A text cell that starts with one of these is a formula to a spreadsheet.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Files a spreadsheet opens as a table, by suffix: downloaded with formula-like cells escaped.
SPREADSHEET_DELIMITERS = {".csv": ",", ".tsv": "\t"}
# A text cell that a spreadsheet reads as a plain number, such as -3.5 or +1e3.
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
# One CSV field may hold this much (the csv module's default is 128 KB).
CSV_FIELD_MAX_BYTES = 64 * 1024 * 1024


class TooLargeForExcel(Exception):
    pass


def escape_text(text: str) -> str:
    """The text as a spreadsheet cell that can never be a formula (OWASP's advice).

    Args:
        text: A cell's text (a header or a value).

    Returns:
        The text with a single quote in front when it begins like a formula and is not a
        plain number; otherwise the text itself.
    """
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def escape_csv(source: Path, target: Path, *, delimiter: str = ",") -> int:
    """Copy the CSV at `source` to `target` with every cell escaped (see `escape_text`).

    Line ends stay as the source has them; bytes that are not UTF-8 pass through unchanged.
    Returns the number of records.
    """
    csv.field_size_limit(CSV_FIELD_MAX_BYTES)  # in the preview child only
    with (
        source.open(encoding="utf-8", errors="surrogateescape", newline="") as reading,
        target.open("w", encoding="utf-8", errors="surrogateescape", newline="") as writing,
    ):
        return _escape_records(reading, writing, delimiter)


def escape_csv_bytes(data: bytes, *, delimiter: str = ",") -> bytes:
    """`escape_csv` for a CSV held in memory (a file a report attaches, a few MB at most)."""
    writing = io.StringIO(newline="")
    text = data.decode("utf-8", errors="surrogateescape")
    _escape_records(io.StringIO(text, newline=""), writing, delimiter)
    return writing.getvalue().encode("utf-8", errors="surrogateescape")


def _escape_records(reading: TextIO, writing: TextIO, delimiter: str) -> int:
    first = reading.readline()
    reading.seek(0)
    end = "\r\n" if first.endswith("\r\n") else "\n"
    minimal = csv.writer(writing, delimiter=delimiter, lineterminator=end)
    # A cell holding a carriage return is quoted, or it would end the record.
    quoted = csv.writer(writing, delimiter=delimiter, lineterminator=end, quoting=csv.QUOTE_ALL)
    count = 0
    for record in csv.reader(reading, delimiter=delimiter):
        cells = [escape_text(cell) for cell in record]
        (quoted if any("\r" in c for c in cells) else minimal).writerow(cells)
        count += 1
    return count


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
    worksheet.append([_text_cell(worksheet, str(c)) for c in frame.columns])
    for row in frame.itertuples(index=False, name=None):
        worksheet.append([_cell(worksheet, value) for value in row])
    workbook.save(target)
    return len(frame)


def _cell(worksheet: Any, value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.tz_localize(None).to_pydatetime() if value.tzinfo else value.to_pydatetime()
    if isinstance(value, str):
        return _text_cell(worksheet, value)
    if isinstance(value, (int, float, bool, datetime, date)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        item = value.item()
        return _text_cell(worksheet, item) if isinstance(item, str) else item
    return _text_cell(worksheet, str(value))


def _text_cell(worksheet: Any, text: str) -> WriteOnlyCell:
    # Text, never a formula: a table's cells are data (and may come from hostile files).
    cell = WriteOnlyCell(worksheet, value=escape_text(text))
    cell.data_type = "s"
    return cell


def _sheet_name(name: str) -> str:
    cleaned = re.sub(r"[\\/*?:\[\]]", " ", name).strip("' ")[:31]
    return cleaned or "Table"

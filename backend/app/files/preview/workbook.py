"""Previews of Excel workbooks: each worksheet listed and bounded before anything parses
it (unpacked size, packing ratio, sheets that do not state their size), then the first rows
of the one asked for, and its row count from its stated size or a byte scan of its XML.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import pandas as pd
from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.cell import range_boundaries

from app.files.detect import Detected, convert_text, find_header_row
from app.files.preview.errors import TooCostly, UnreadableFile, header_past_end, sheet_not_found
from app.files.preview.table import SHEET_TYPE_ROWS, Preview, build_preview

# A workbook is refused before it is parsed when it unpacks to more than this in all...
EXCEL_MAX_UNPACKED_BYTES = 1 << 30
# ...or when a part of it unpacks to this many times its packed size (real sheets: 4-25).
EXCEL_MAX_RATIO = 100
EXCEL_RATIO_MIN_BYTES = 1 << 20
# A sheet that does not state its size (its <dimension>), or states it wrongly, is read in
# full to count its rows (by openpyxl as it opens, then by us): only this big.
EXCEL_UNSIZED_SHEET_MAX_BYTES = 16 << 20
_SHEET_HEAD_BYTES = 1 << 20
# SpreadsheetML tags, with or without a namespace prefix.
_SHEET_DATA = re.compile(rb"<(?:[\w.-]+:)?sheetData[\s/>]")
_DIMENSION = re.compile(rb"<(?:[\w.-]+:)?dimension\s[^>]*?\bref\s*=\s*[\"']([^\"']*)[\"']")
_ROW = re.compile(rb"<(?:[\w.-]+:)?row(?=[\s/>])([^>]*)>")
_ROW_NUMBER = re.compile(rb"""(?:^|\s)r\s*=\s*["'](\d+)["']""")
_VALUE = re.compile(rb"<(?:[\w.-]+:)?(?:v|is)(?=[\s/>])")
# Title rows looked through for the header row.
HEADER_LOOK = 20


@dataclass(frozen=True)
class Worksheet:
    """A worksheet of a workbook, as found before any sheet is parsed.

    Attributes:
        name: Its title, as the workbook's tabs show it.
        part: Its XML part in the archive (None in a legacy .xls file).
        stated_rows: The rows its dimension states (last minus first: a header and data
            rows), or None when it states none; exact in a legacy .xls file.
    """

    name: str
    part: str | None
    stated_rows: int | None


_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def open_worksheet(path: Path, name: str, sheet: str | None) -> tuple[list[Worksheet], Worksheet]:
    """Lists a workbook's worksheets within the preview's bounds and picks one.

    Every bound (unpacked size, packing ratio, sheets that do not state their size) is
    checked for the whole workbook before anything parses it, whichever sheet is asked for.

    Args:
        path: The workbook.
        name: Its user-facing name, for errors.
        sheet: The worksheet's name; None for the first.

    Raises:
        SheetNotFound: No worksheet has that name.
        TooCostly: The workbook is beyond the bounds.
        UnreadableFile: It is not a workbook, or has no worksheet.
    """
    if zipfile.is_zipfile(path):
        sheets = _check_workbook(path, name)
    else:
        with path.open("rb") as handle:
            if handle.read(len(_OLE2_MAGIC)) != _OLE2_MAGIC:
                raise UnreadableFile(
                    f"{name} could not be read as Excel: the file is damaged or is not an"
                    " Excel workbook"
                )
        import xlrd  # legacy .xls: xlrd knows each sheet's exact size

        legacy = xlrd.open_workbook(str(path), on_demand=True)
        try:
            sheets = [
                Worksheet(title, None, legacy.sheet_by_name(title).nrows - 1)
                for title in legacy.sheet_names()
            ]
        finally:
            legacy.release_resources()
        if not sheets:
            raise UnreadableFile(f"{name} could not be read as Excel: it has no worksheet")
    if sheet is None:
        return sheets, sheets[0]
    chosen = next((s for s in sheets if s.name == sheet), None)
    if chosen is None:
        raise sheet_not_found(name, sheet, [s.name for s in sheets])
    return sheets, chosen


def header_row_of(path: Path, name: str, sheet: Worksheet, header_row: int | None) -> int:
    """The worksheet's header row: `header_row` checked, or the one under any title rows.

    Raises:
        BadHeaderRow: `header_row` is past the sheet's rows.
    """
    top = pd.read_excel(
        path, sheet_name=sheet.name, header=None, nrows=max(HEADER_LOOK, (header_row or 0) + 1)
    )
    if header_row is None:
        return find_header_row(top.astype(object).values.tolist(), look=HEADER_LOOK)
    if header_row >= max(len(top), 1):
        raise header_past_end(name, header_row, len(top))
    return header_row


def read_worksheet(
    path: Path, name: str, sheet: Worksheet, nrows: int | None, header_row: int = 0
) -> tuple[pd.DataFrame, Detected]:
    """The first `nrows` rows (None: all) of a worksheet found by `open_worksheet`, under
    its header row, text cells of dates, amounts, percents and yes/no read as such."""
    frame = pd.read_excel(path, sheet_name=sheet.name, nrows=nrows, header=header_row)
    detected = Detected()
    return convert_text(frame, detected, day_first=False), detected


def preview_excel(
    path: Path,
    name: str,
    sheet: str | None,
    header_row: int | None = None,
    type_rows: int | None = SHEET_TYPE_ROWS,
) -> Preview:
    """A worksheet's preview (the first when `sheet` is None), with the workbook's sheets.

    Args:
        path: The workbook.
        name: Its user-facing name, for errors.
        sheet: The worksheet's name; None for the first.
        header_row: The row of column names (0-based, as the sheet shows its rows from the
            first); None: the one under any title rows.
        type_rows: The rows whose cells decide each column's kind (None: all; the whole
            sheet's decide them after: whole_kinds.py).
    """
    sheets, chosen = open_worksheet(path, name, sheet)
    header = header_row_of(path, name, chosen, header_row)
    frame, detected = read_worksheet(path, name, chosen, type_rows, header)
    titles = [s.name for s in sheets]

    def done(row_count: int) -> Preview:
        shown = build_preview(
            frame, row_count, detected=detected, header_row=header, checked_later=True
        )
        return replace(shown, sheets=titles, sheet=chosen.name)

    if type_rows is None or len(frame) < type_rows:
        return done(len(frame))
    stated = None if chosen.stated_rows is None else chosen.stated_rows - header
    if stated is not None and (chosen.part is None or stated >= len(frame)):
        return done(stated)
    assert chosen.part is not None
    # Some writers leave the dimension out or wrong: count the rows that hold values.
    with zipfile.ZipFile(path) as archive:
        if archive.getinfo(chosen.part).file_size > EXCEL_UNSIZED_SHEET_MAX_BYTES:
            raise _unsized_sheet(name, archive.getinfo(chosen.part).file_size)
        with archive.open(chosen.part) as stream:
            return done(filled_row_span(stream) - header)


def _check_workbook(path: Path, name: str) -> list[Worksheet]:
    """Refuses a workbook that would cost too much to open, before anything parses it.

    Returns:
        Its worksheets, in order.
    """
    too_large = f"{name} is too large to preview"
    later = "It can still be downloaded and used in questions."
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        unpacked = sum(member.file_size for member in members)
        if unpacked > EXCEL_MAX_UNPACKED_BYTES:
            raise TooCostly(
                f"{too_large}: it unpacks to {unpacked >> 20:,} MB, more than "
                f"{EXCEL_MAX_UNPACKED_BYTES >> 20:,} MB. {later}"
            )
        for member in members:
            ratio = member.file_size / max(member.compress_size, 1)
            if member.file_size > EXCEL_RATIO_MIN_BYTES and ratio > EXCEL_MAX_RATIO:
                raise TooCostly(
                    f"{too_large}: {member.filename} unpacks to {member.file_size >> 20:,} MB "
                    f"from {max(member.compress_size >> 10, 1):,} KB ({ratio:,.0f} times), "
                    f"which real workbooks never do. {later}"
                )
        sheets = []
        for title, part in _worksheet_parts(path):
            with archive.open(part) as stream:
                sheets.append(Worksheet(title, part, _stated_rows(stream)))
        # openpyxl reads every sheet without a dimension in full just to open the workbook.
        unsized = sum(
            archive.getinfo(s.part).file_size for s in sheets if s.stated_rows is None and s.part
        )
        if unsized > EXCEL_UNSIZED_SHEET_MAX_BYTES:
            raise _unsized_sheet(name, unsized)
    if not sheets:
        raise UnreadableFile(f"{name} could not be read as Excel: it has no worksheet")
    return sheets


def _unsized_sheet(name: str, size: int) -> UnreadableFile:
    return TooCostly(
        f"{name} is too large to preview: {size >> 20:,} MB of sheet data does not state its"
        f" size, and only up to {EXCEL_UNSIZED_SHEET_MAX_BYTES >> 20} MB is read in full to"
        " count rows. It can still be downloaded and used in questions."
    )


def _worksheet_parts(path: Path) -> list[tuple[str, str]]:
    """The titles and archive parts of a workbook's worksheets, in order, reading no sheet."""
    # A file object: given a path, openpyxl insists on an .xlsx-like extension.
    with path.open("rb") as handle:
        reader = ExcelReader(handle, read_only=True, keep_links=False)
        try:
            reader.read_manifest()
            reader.read_workbook()
            return [
                (sheet.name, rel.target)
                for sheet, rel in reader.parser.find_sheets()
                if rel.target in reader.valid_files and "chartsheet" not in rel.Type
            ]
        finally:
            reader.archive.close()


def _stated_rows(stream: IO[bytes]) -> int | None:
    """What a worksheet's `<dimension>` says: its last row minus its first, or None."""
    head = b""
    while len(head) < _SHEET_HEAD_BYTES and (chunk := stream.read(64 << 10)):
        head += chunk
        if data := _SHEET_DATA.search(head):
            head = head[: data.start()]
            break
    found = _DIMENSION.search(head)
    if found is None:
        return None
    try:
        _, first, _, last = range_boundaries(found[1].decode("ascii").upper())
    except (ValueError, TypeError, UnicodeDecodeError):
        return None
    return last - first if first is not None and last is not None else None


def filled_row_span(stream: IO[bytes], chunk_size: int = 1 << 20) -> int:
    """Counts a worksheet's rows from its first row holding a value to its last, minus one.

    That is the data rows under a header, with blank rows in between, as openpyxl would
    number them; a byte scan of the XML, many times faster than parsing its cells.

    Args:
        stream: The worksheet's XML.
        chunk_size: How much to read at a time.
    """
    number, first, last = 0, None, None
    open_row = False  # inside a row that has no value yet
    carry = b""
    while True:
        chunk = stream.read(chunk_size)
        data = carry + chunk
        start = 0
        for row in _ROW.finditer(data):
            if open_row and _VALUE.search(data, start, row.start()):
                first, last = number if first is None else first, number
            explicit = _ROW_NUMBER.search(row[1])
            number = int(explicit[1]) if explicit else number + 1
            open_row, start = True, row.end()
        end = len(data)
        if chunk:  # keep a tag cut at the chunk's end for the next round
            cut = data.rfind(b"<", start)
            if cut >= 0 and data.find(b">", cut) < 0:
                end = cut
        if open_row and _VALUE.search(data, start, end):
            first, last = number if first is None else first, number
            open_row = False
        carry = data[end:]
        if not chunk:
            return last - first if first is not None and last is not None else 0

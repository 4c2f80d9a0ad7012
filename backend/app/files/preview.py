"""Tabular previews of uploaded dataset files: columns with dtypes, the first rows, a row count."""

from __future__ import annotations

import codecs
import datetime as dt
import io
import itertools
import json
import math
import re
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Literal, get_args

import charset_normalizer
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.cell import range_boundaries

from app.errors import AppError
from app.files.detect import Detected, convert_comma_numbers, convert_dates, uses_decimal_comma

TabularKind = Literal["csv", "excel", "parquet", "json", "jsonl"]
TABULAR_KINDS: tuple[TabularKind, ...] = get_args(TabularKind)
PREVIEW_ROWS = 50
INFER_ROWS = 1000
CSV_HEAD_BYTES = 4 << 20
CSV_HEAD_MAX_BYTES = 64 << 20
JSON_MAX_BYTES = 256 << 20
# A workbook is refused before it is parsed when it unpacks to more than this in all...
EXCEL_MAX_UNPACKED_BYTES = 1 << 30
# ...or when a part of it unpacks to this many times its packed size (real sheets: 4-25).
EXCEL_MAX_RATIO = 100
EXCEL_RATIO_MIN_BYTES = 1 << 20
# A sheet that does not state its size (its <dimension>), or states it wrongly, is read in
# full to count its rows (by openpyxl as it opens, then by us): only this big.
EXCEL_UNSIZED_SHEET_MAX_BYTES = 16 << 20
_SHEET_HEAD_BYTES = 1 << 20

_KIND_BY_EXT: dict[str, TabularKind] = {
    "csv": "csv", "tsv": "csv", "tab": "csv", "txt": "csv",
    "xlsx": "excel", "xlsm": "excel", "xls": "excel",
    "parquet": "parquet", "pq": "parquet",
    "json": "json", "jsonl": "jsonl", "ndjson": "jsonl",
}  # fmt: skip
_LABELS: dict[TabularKind, str] = {
    "csv": "CSV", "excel": "Excel", "parquet": "Parquet", "json": "JSON", "jsonl": "JSON lines",
}  # fmt: skip
_BOMS = {codecs.BOM_UTF8: "utf-8-sig", codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}
_DELIMITERS = ",;\t|"
_QUOTED = re.compile(r'"[^"]*(?:""[^"]*)*"')
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\ufffd]")
_RAGGED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
# SpreadsheetML tags, with or without a namespace prefix.
_SHEET_DATA = re.compile(rb"<(?:[\w.-]+:)?sheetData[\s/>]")
_DIMENSION = re.compile(rb"<(?:[\w.-]+:)?dimension\s[^>]*?\bref\s*=\s*[\"']([^\"']*)[\"']")
_ROW = re.compile(rb"<(?:[\w.-]+:)?row(?=[\s/>])([^>]*)>")
_ROW_NUMBER = re.compile(rb"""(?:^|\s)r\s*=\s*["'](\d+)["']""")
_VALUE = re.compile(rb"<(?:[\w.-]+:)?(?:v|is)(?=[\s/>])")
# Overlapping matches of "break, break": each is one blank line.
_BLANK_LINES = {
    b"\n\n": re.compile(rb"\n(?=\n)"),
    b"\r\r": re.compile(rb"\r(?=\r)"),
    b"\n\r\n": re.compile(rb"\n(?=\r\n)"),
}


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


class PreviewError(AppError):
    """A preview failure the API reports as `status` with `code` and a sentence naming the file."""

    status = 422
    code = "unreadable_file"


class PreviewUnsupported(PreviewError):
    """The file type is not one we preview."""

    status = 415
    code = "preview_unsupported"


class UnreadableFile(PreviewError):
    """The file claims a tabular type but cannot be parsed as one."""


class TooCostly(UnreadableFile):
    """The file may well be fine, but previewing it would cost more than its bounds allow."""


class SheetNotFound(PreviewError):
    """The workbook has no worksheet of the name asked for."""

    status = 404
    code = "sheet_not_found"


class NotAWorkbook(PreviewError):
    """A sheet was asked for in a file that has none."""

    status = 422
    code = "not_a_workbook"


class NeedMoreBytes(Exception):
    """The head given to `preview_csv_head` holds too few complete rows; read a bigger one."""


def preview_kind(name: str) -> TabularKind | None:
    """Returns the tabular kind of a file from its name's extension, or None if not previewable."""
    _, dot, ext = name.rpartition(".")
    return _KIND_BY_EXT.get(ext.lower()) if dot else None


class CsvRowCounter:
    """Counts the data rows of a delimited text file fed in chunks of any size.

    Quote-aware by parity: line breaks between an odd and an even `"` are inside a field. The
    line-ending style (`\\n`, `\\r\\n` or a lone `\\r`) is taken from the first break. Blank lines
    are not rows (as pandas skips them), so a missing final break or trailing blank lines do not
    change the count. UTF-16 input (with a BOM) is decoded incrementally.

    Args:
        header: Whether the first line is a header that is not counted.
        quoting: Whether `"` starts quoted fields (False for JSON lines).
    """

    def __init__(self, *, header: bool = True, quoting: bool = True) -> None:
        self._header = header
        self._quoting = quoting
        self._first: bytes | None = b""  # bytes held until the BOM question is settled
        self._decoder: codecs.IncrementalDecoder | None = None
        self._in_quote = False
        self._held = b""  # text held until the line-ending style is known
        self._break = b""  # the byte counted as a line break
        self._blank = b""  # a break right after a break: a blank line
        self._tail = b""  # last bytes seen, so a blank line across chunks is found
        self._breaks = 0
        self._blanks = 0
        self._result: int | None = None

    def feed(self, chunk: bytes) -> None:
        """Counts one more chunk of the file."""
        if self._first is not None:
            self._first += chunk
            if len(self._first) < 2:
                return
            chunk, self._first = self._first, None
            if chunk[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                self._decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
        if self._decoder is not None:
            chunk = self._decoder.decode(chunk).encode()
        self._scan(chunk)

    def finish(self) -> int:
        """Returns the number of data rows once the whole file has been fed."""
        if self._result is None:
            if self._first is not None:
                self._scan(self._first)
            if self._decoder is not None:
                self._scan(self._decoder.decode(b"", final=True).encode())
            self._count(b"", final=True)
            last = self._tail if self._break else self._held
            if self._break == b"\n":
                last = last.rstrip(b"\r")
            lines = self._breaks - self._blanks + (1 if last[-1:] not in (b"", self._break) else 0)
            self._result = max(0, lines - self._header)
        return self._result

    def _scan(self, data: bytes) -> None:
        if self._quoting and b'"' in data:
            # Quoted text is blanked out, its quote marks stay as ordinary content.
            parts = data.split(b'"')
            inside = 0 if self._in_quote else 1
            parts[inside::2] = itertools.repeat(b"", len(range(inside, len(parts), 2)))
            self._in_quote ^= len(parts) % 2 == 0
            data = b'"'.join(parts)
        elif self._in_quote:
            return
        self._count(data)

    def _count(self, data: bytes, final: bool = False) -> None:
        if not self._break:
            data = self._held + data
            first = min((at for at in (data.find(b"\r"), data.find(b"\n")) if at >= 0), default=-1)
            if first < 0 or (data[first:] == b"\r" and not final):  # \r\n may be split
                self._held = data[-1:] if first < 0 else data
                return
            crlf = data[first : first + 2] == b"\r\n"
            self._break = b"\r" if data[first : first + 1] == b"\r" and not crlf else b"\n"
            self._blank = b"\n\r\n" if crlf else self._break * 2
            self._held, self._tail = b"", self._break  # the file start acts as a line start
        self._breaks += _count_byte(data, self._break)
        keep = len(self._blank) - 1
        if self._blank[:2] in self._tail + data[:keep] or _has_pair(data, self._blank[:2]):
            probe = self._tail + data
            self._blanks += len(_BLANK_LINES[self._blank].findall(probe))
        self._tail = (self._tail + data[-keep:])[-keep:]


def _count_byte(data: bytes, byte: bytes) -> int:
    """`data.count(byte)`, several times faster with numpy."""
    return int(np.count_nonzero(np.frombuffer(data, np.uint8) == byte[0]))


def _has_pair(data: bytes, pair: bytes) -> bool:
    """`pair in data` for two bytes; bytes.find crawls when pair[0] is as frequent as a newline."""
    if len(data) < 4096:
        return pair in data
    word = np.frombuffer(pair, np.uint16)[0]
    even = np.frombuffer(data, np.uint16, count=len(data) // 2)
    odd = np.frombuffer(data, np.uint16, count=(len(data) - 1) // 2, offset=1)
    return bool((even == word).any() or (odd == word).any())


def preview_csv_head(head: bytes, *, name: str, complete: bool, row_count: int | None) -> Preview:
    """Builds the preview of a delimited text file from its first bytes.

    Args:
        head: The first bytes of the file.
        name: The file name, for the delimiter (.tsv/.tab) and for error messages.
        complete: Whether `head` is the whole file.
        row_count: The data rows counted by `CsvRowCounter`; required unless `complete`.

    Returns:
        The preview; its row count is taken from the parse when `complete`.

    Raises:
        NeedMoreBytes: `head` is incomplete and holds fewer than 50 complete data rows.
        UnreadableFile: The bytes are not text or not a consistent table.
        ValueError: `row_count` is None while `complete` is False.
    """
    if not complete and row_count is None:
        raise ValueError("row_count is required when the head is not the whole file")
    text, encoding = decode_text(head, name=name, complete=complete)
    if not complete:
        text = complete_records(text)
        if not text:
            raise NeedMoreBytes
    elif not text.strip():
        return Preview(columns=[], rows=[], row_count=0)
    try:
        frame, text_format, dates = read_delimited(
            text, name=name, encoding=encoding, nrows=INFER_ROWS
        )
        sep = str(text_format["delimiter"])
        if complete:
            row_count = len(frame)
            if row_count >= INFER_ROWS:
                chunks = pd.read_csv(io.StringIO(text), sep=sep, usecols=[0], chunksize=1 << 16)
                row_count = sum(len(chunk) for chunk in chunks)
    except (PreviewError, NeedMoreBytes):
        raise
    except Exception as exc:
        raise UnreadableFile(f"{name} could not be read as CSV: {_describe(exc)}") from exc
    assert row_count is not None
    if not complete and len(frame) < min(PREVIEW_ROWS, row_count):
        raise NeedMoreBytes
    return _preview(frame, row_count, dates=dates, text_format=text_format)


def read_delimited(
    text: str, *, name: str, encoding: str, nrows: int
) -> tuple[pd.DataFrame, dict[str, str | None], dict[str, str]]:
    """Reads the first rows of delimited text, with decimal commas and dates detected.

    Args:
        text: Complete records of the file, decoded.
        name: The file name, for the delimiter (.tsv/.tab) and for error messages.
        encoding: The codec `text` was decoded with, to report.
        nrows: The most rows to read.

    Returns:
        The table; how it was read (`delimiter`, `decimal`, `thousands`, `encoding`); and
        the format of each text column that was read as dates.
    """
    tab = name.lower().endswith((".tsv", ".tab"))
    sep = "\t" if tab else _sniff_delimiter(text)
    frame = _read_csv(text, sep, name, nrows=nrows)
    detected = Detected()
    if uses_decimal_comma(frame, sep):
        detected.decimal = ","
        frame = convert_comma_numbers(
            _read_csv(text, sep, name, nrows=nrows, decimal=","), detected
        )
    frame = convert_dates(frame, detected, day_first=detected.decimal == "," or sep == ";")
    text_format: dict[str, str | None] = {
        "delimiter": sep,
        "decimal": detected.decimal,
        "thousands": detected.thousands,
        "encoding": encoding,
    }
    return frame, text_format, detected.date_formats


def preview_file(path: Path, *, name: str, sheet: str | None = None) -> Preview:
    """Builds the preview of a local file of any tabular kind, reading only what it needs.

    Args:
        path: The local file.
        name: The file's user-facing name: its extension picks the kind; errors quote it.
        sheet: The worksheet of a workbook to preview (None: the first).

    Raises:
        PreviewUnsupported: The extension is not a tabular kind.
        UnreadableFile: The file cannot be parsed as its kind.
        NotAWorkbook: A sheet was asked of a file that is not a workbook.
        SheetNotFound: The workbook has no worksheet of that name.
    """
    kind = tabular_kind(name)
    if sheet is not None and kind != "excel":
        raise no_sheets(name)
    path.stat()  # a missing file is our fault, not an unreadable upload
    try:
        if kind == "excel":
            return _preview_excel(path, name, sheet)
        return _READERS[kind](path, name)
    except (PreviewError, MemoryError):
        raise
    except Exception as exc:
        raise unreadable(name, kind, exc) from exc


def tabular_kind(name: str) -> TabularKind:
    """The file's tabular kind; raises PreviewUnsupported for any other file."""
    kind = preview_kind(name)
    if kind is None:
        raise PreviewUnsupported(
            f"{name} cannot be previewed: only CSV, TSV, Excel, Parquet and JSON files can"
        )
    return kind


def unreadable(name: str, kind: TabularKind, exc: Exception) -> UnreadableFile:
    """The error for a file that failed to parse as `kind`, naming the cause in words."""
    return UnreadableFile(f"{name} could not be read as {_LABELS[kind]}: {_describe(exc)}")


def no_sheets(name: str) -> NotAWorkbook:
    return NotAWorkbook(f"{name} has no sheets: only Excel workbooks do.")


def _preview_csv(path: Path, name: str) -> Preview:
    size, row_count = CSV_HEAD_BYTES, None
    with path.open("rb") as file:
        while True:
            file.seek(0)
            head = file.read(size)
            complete = len(head) < size or not file.read(1)
            if not complete and row_count is None:
                file.seek(0)
                counter = CsvRowCounter()
                while chunk := file.read(8 << 20):
                    counter.feed(chunk)
                row_count = counter.finish()
            try:
                return preview_csv_head(head, name=name, complete=complete, row_count=row_count)
            except NeedMoreBytes:
                if size >= CSV_HEAD_MAX_BYTES:
                    raise TooCostly(
                        f"{name} could not be read as CSV: its first {PREVIEW_ROWS} rows take more"
                        f" than {CSV_HEAD_MAX_BYTES >> 20} MB"
                    ) from None
                size *= 2


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


def sheet_not_found(name: str, sheet: str, titles: list[str]) -> SheetNotFound:
    listed = ", ".join(f'"{title}"' for title in titles)
    return SheetNotFound(f'{name} has no sheet named "{sheet}". Its sheets: {listed}.')


def read_worksheet(path: Path, name: str, sheet: Worksheet, nrows: int) -> pd.DataFrame:
    """The first `nrows` rows of a worksheet found by `open_worksheet`."""
    return pd.read_excel(path, sheet_name=sheet.name, nrows=nrows)


def _preview_excel(path: Path, name: str, sheet: str | None) -> Preview:
    sheets, chosen = open_worksheet(path, name, sheet)
    frame = read_worksheet(path, name, chosen, INFER_ROWS)
    titles = [s.name for s in sheets]

    def done(row_count: int) -> Preview:
        return replace(_preview(frame, row_count), sheets=titles, sheet=chosen.name)

    if len(frame) < INFER_ROWS:
        return done(len(frame))
    if chosen.stated_rows is not None and (chosen.part is None or chosen.stated_rows >= len(frame)):
        return done(chosen.stated_rows)
    assert chosen.part is not None
    # Some writers leave the dimension out or wrong: count the rows that hold values.
    with zipfile.ZipFile(path) as archive:
        if archive.getinfo(chosen.part).file_size > EXCEL_UNSIZED_SHEET_MAX_BYTES:
            raise _unsized_sheet(name, archive.getinfo(chosen.part).file_size)
        with archive.open(chosen.part) as stream:
            return done(filled_row_span(stream))


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


def _preview_parquet(path: Path, name: str) -> Preview:
    with pq.ParquetFile(path) as parquet:
        batch = next(parquet.iter_batches(batch_size=PREVIEW_ROWS), None)
        table = pa.Table.from_batches([batch]) if batch else parquet.schema_arrow.empty_table()
        return _preview(table.to_pandas(), parquet.metadata.num_rows)


def _preview_json(path: Path, name: str) -> Preview:
    frame = read_json_table(path, name)
    dates = Detected()
    frame = convert_dates(frame, dates, day_first=False)
    return _preview(frame, len(frame), dates=dates.date_formats)


def read_json_table(path: Path, name: str) -> pd.DataFrame:
    """A JSON file's table: an array of records, or an object of columns."""
    if path.stat().st_size > JSON_MAX_BYTES:
        raise UnreadableFile(
            f"{name} is too large to preview as JSON (over {JSON_MAX_BYTES >> 20} MB);"
            " JSON lines or Parquet suit big tables"
        )
    data = json.loads(path.read_bytes())
    columns = list(data.values()) if isinstance(data, dict) else []
    if isinstance(data, list) and all(isinstance(record, dict) for record in data):
        frame = pd.json_normalize(data)
    elif columns and all(isinstance(column, dict) for column in columns):
        frame = pd.DataFrame(data)  # pandas' own orient="columns": {column: {row: value}}
    elif all(isinstance(column, list) for column in columns) and len(set(map(len, columns))) == 1:
        frame = pd.DataFrame(data)
    else:
        raise UnreadableFile(
            f"{name} could not be read as JSON: it is not a table (expected an array of objects"
            " or an object of equally long column arrays)"
        )
    return frame


def _preview_jsonl(path: Path, name: str) -> Preview:
    counter = CsvRowCounter(header=False, quoting=False)
    with path.open("rb") as file:
        records = read_json_lines(file, name, INFER_ROWS, counter)
        while chunk := file.read(8 << 20):
            counter.feed(chunk)
    frame = pd.json_normalize(records)
    dates = Detected()
    frame = convert_dates(frame, dates, day_first=False)
    return _preview(frame, counter.finish(), dates=dates.date_formats)


def read_json_lines(
    file: IO[bytes], name: str, limit: int, counter: CsvRowCounter | None = None
) -> list[dict[str, Any]]:
    """Reads up to `limit` records of a JSON lines file, feeding what it reads to `counter`."""
    records: list[dict[str, Any]] = []
    for number, line in enumerate(file, 1):
        if counter is not None:
            counter.feed(line)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            problem = "" if isinstance(record, dict) else "is not a JSON object"
        except ValueError as exc:
            problem = f"is not valid JSON ({getattr(exc, 'msg', exc)})"
        if problem:
            raise UnreadableFile(f"{name} could not be read as JSON lines: line {number} {problem}")
        records.append(record)
        if len(records) == limit:
            break
    return records


_READERS = {"csv": _preview_csv, "parquet": _preview_parquet,
            "json": _preview_json, "jsonl": _preview_jsonl}  # fmt: skip


def decode_text(head: bytes, *, name: str, complete: bool) -> tuple[str, str]:
    """Decodes a text file's first bytes: by its BOM, as UTF-8, or as the likeliest code page.

    Returns:
        The text and the codec it was decoded with.

    Raises:
        UnreadableFile: The bytes are not text.
    """
    encoding = next((enc for bom, enc in _BOMS.items() if head.startswith(bom)), None)
    if encoding != "utf-16" and b"\x00" in head:
        raise UnreadableFile(f"{name} does not look like a text file")
    try:
        text = codecs.getincrementaldecoder(encoding or "utf-8")().decode(head, final=complete)
    except UnicodeDecodeError as exc:
        encoding = encoding or _guess_encoding(head, exc.start)
        text = codecs.getincrementaldecoder(encoding)("replace").decode(head, final=complete)
    sample = text[:65536]
    if len(_CONTROL.findall(sample)) * 50 > len(sample):
        raise UnreadableFile(f"{name} does not look like a text file")
    return text, encoding or "utf-8"


def _guess_encoding(head: bytes, bad_at: int) -> str:
    # Detectors are unreliable on mostly-ASCII text, so show them only the non-ASCII lines.
    start = head.rfind(b"\n", 0, bad_at) + 1
    lines = head[start : start + (1 << 20)].splitlines()
    sample = b"\n".join(line for line in lines if not line.isascii())[:65536]
    # Short Western samples fool charset-normalizer (cp775, cp1006...): prefer cp1252 if plausible.
    if charset_normalizer.from_bytes(sample, cp_isolation=["cp1252"]).best() is not None:
        return "cp1252"
    matches = charset_normalizer.from_bytes(sample)
    best = matches.best()
    if best is None:
        return "cp1252"
    # Equally plausible Mac code pages come first for short samples; Windows ones are likelier.
    windows = (m for m in matches if m.encoding.startswith("cp125") and m.chaos <= best.chaos + 0.1)
    return next(windows, best).encoding


def complete_records(text: str) -> str:
    """Cuts an incomplete head after its last line break that is not inside quotes."""
    quotes, end = text.count('"'), len(text)
    while (at := max(text.rfind("\n", 0, end), text.rfind("\r", 0, end))) >= 0:
        if (quotes - text.count('"', at)) % 2 == 0:
            return text[: at + 1]
        end = text.rfind('"', 0, at)
    return ""


def _sniff_delimiter(text: str) -> str:
    sample = text[:65536]
    lines = [line for line in _LINE_BREAK.split(_QUOTED.sub("", sample)) if line.strip()]
    if len(text) > len(sample) and len(lines) > 1:
        lines.pop()  # cut short by the sample
    best, best_key = ",", (0.0, 0)
    for delimiter in _DELIMITERS:
        counts = [line.count(delimiter) for line in lines[:50]]
        if counts and counts[0]:
            key = (sum(count == counts[0] for count in counts) / len(counts), counts[0])
            if key > best_key:
                best, best_key = delimiter, key
    return best


def _read_csv(text: str, sep: str, name: str, *, nrows: int, decimal: str = ".") -> pd.DataFrame:
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, nrows=nrows, decimal=decimal)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    extra = frame.index.nlevels
    if extra > 1 or not frame.index.equals(pd.RangeIndex(len(frame))):
        # Data rows longer than the header: pandas made the first fields an index.
        if not frame.iloc[:, -extra:].isna().all().all():
            raise UnreadableFile(
                f"{name} could not be read as CSV: the first data row has"
                f" {frame.shape[1] + extra} fields, the header {frame.shape[1]}"
            )
        header = list(frame.columns)  # only trailing delimiters: drop the empty fields
        frame = frame.reset_index().iloc[:, : len(header)]
        frame.columns = header
    return frame


def _describe(exc: Exception) -> str:
    if match := _RAGGED.search(str(exc)):
        expected, line, saw = match.groups()
        return f"line {line} has {saw} fields, expected {expected}"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
    if isinstance(exc, zipfile.BadZipFile) or "Excel file format cannot be determined" in str(exc):
        return "the file is damaged or is not an Excel workbook"
    if isinstance(exc, UnicodeError):
        return "the text encoding could not be decoded"
    message = str(exc).strip().removeprefix("Error tokenizing data. C error: ")
    return message.splitlines()[0][:300] if message else type(exc).__name__


def _preview(
    frame: pd.DataFrame,
    row_count: int,
    *,
    dates: dict[str, str] | None = None,
    text_format: dict[str, str | None] | None = None,
) -> Preview:
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

"""Previews of delimited text files (CSV, TSV and the like) from their first bytes: the
text's encoding, its delimiter, the header row under any title rows, decimal commas,
amounts, percents, yes/no and dates detected, a head that grows until the first rows fit,
and the rows of the whole file counted apart.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer
import pandas as pd

from app.files.detect import (
    Detected,
    convert_comma_numbers,
    convert_text,
    find_header_row,
    uses_decimal_comma,
)
from app.files.preview.counting import CsvRowCounter
from app.files.preview.errors import (
    BadHeaderRow,
    PreviewError,
    TooCostly,
    UnreadableFile,
    describe,
    header_past_end,
)
from app.files.preview.table import CSV_TYPE_ROWS, PREVIEW_ROWS, Preview, build_preview

CSV_HEAD_BYTES = 4 << 20
CSV_HEAD_MAX_BYTES = 64 << 20
_BOMS = {codecs.BOM_UTF8: "utf-8-sig", codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}
_DELIMITERS = ",;\t|"
_QUOTED = re.compile(r'"[^"]*(?:""[^"]*)*"')
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\ufffd]")
# Title rows looked through for the header, and the records read to find it.
HEADER_LOOK = 20
_HEADER_RECORDS = 30


class NeedMoreBytes(Exception):
    """The head given to `preview_csv_head` holds too few complete rows; read a bigger one."""


def preview_csv_head(
    head: bytes,
    *,
    name: str,
    complete: bool,
    row_count: int | None,
    header_row: int | None = None,
    type_rows: int = CSV_TYPE_ROWS,
) -> Preview:
    """Builds the preview of a delimited text file from its first bytes.

    Args:
        head: The first bytes of the file.
        name: The file name, for the delimiter (.tsv/.tab) and for error messages.
        complete: Whether `head` is the whole file.
        row_count: The data rows counted by `CsvRowCounter` (every record after the first);
            required unless `complete`.
        header_row: The record that holds the column names (None: the one detected).
        type_rows: The rows whose cells decide each column's kind at first (the whole
            file's decide it after: whole_kinds.py).

    Returns:
        The preview; its row count is taken from the parse when `complete`.

    Raises:
        NeedMoreBytes: `head` is incomplete and holds fewer than 50 complete data rows.
        UnreadableFile: The bytes are not text or not a consistent table.
        BadHeaderRow: `header_row` is past the rows of the head.
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
        read = read_delimited(
            text, name=name, encoding=encoding, nrows=type_rows, header_row=header_row
        )
        frame, sep = read.frame, str(read.text_format["delimiter"])
        if complete:
            row_count = len(frame)
            if row_count >= type_rows:
                chunks = pd.read_csv(
                    io.StringIO(text),
                    sep=sep,
                    header=read.header_row,
                    usecols=[0],
                    chunksize=1 << 16,
                )
                row_count = sum(len(chunk) for chunk in chunks)
        else:
            assert row_count is not None
            row_count = max(0, row_count - read.header_row)  # title rows are not data
    except BadHeaderRow:
        if complete:
            raise
        raise NeedMoreBytes from None  # the header row may lie further in
    except (PreviewError, NeedMoreBytes):
        raise
    except Exception as exc:
        raise UnreadableFile(f"{name} could not be read as CSV: {describe(exc)}") from exc
    if not complete and len(frame) < min(PREVIEW_ROWS, row_count):
        raise NeedMoreBytes
    return build_preview(
        frame,
        row_count,
        detected=read.detected,
        text_format=read.text_format,
        header_row=read.header_row,
        checked_later=True,
    )


@dataclass(frozen=True)
class Delimited:
    """The first rows of a delimited text file, as read.

    Attributes:
        frame: The table, its text columns converted where they hold numbers, dates or
            yes/no.
        text_format: How it was read (`delimiter`, `decimal`, `thousands`, `encoding`).
        detected: What the conversions found, per column.
        header_row: The record (blank lines not counted) that holds the column names.
    """

    frame: pd.DataFrame
    text_format: dict[str, str | None]
    detected: Detected
    header_row: int


def read_delimited(
    text: str, *, name: str, encoding: str, nrows: int, header_row: int | None = None
) -> Delimited:
    """Reads the first rows of delimited text under its header row, with decimal commas,
    amounts, percents, yes/no and dates detected.

    Args:
        text: Complete records of the file, decoded.
        name: The file name, for the delimiter (.tsv/.tab) and for error messages.
        encoding: The codec `text` was decoded with, to report.
        nrows: The most rows to read.
        header_row: The record that holds the column names; None: found under any title
            rows (see app.files.detect.find_header_row).

    Raises:
        BadHeaderRow: `header_row` is past the records of `text`.
    """
    tab = name.lower().endswith((".tsv", ".tab"))
    sep = "\t" if tab else _sniff_delimiter(text)
    records = first_records(text, sep, max(_HEADER_RECORDS, (header_row or 0) + 1))
    if header_row is None:
        header_row = find_header_row(records, look=HEADER_LOOK) if records else 0
    elif header_row >= max(len(records), 1):
        raise header_past_end(name, header_row, len(records))
    frame = _read_csv(text, sep, name, nrows=nrows, header_row=header_row)
    detected = Detected()
    if uses_decimal_comma(frame, sep):
        detected.decimal = ","
        frame = convert_comma_numbers(
            _read_csv(text, sep, name, nrows=nrows, decimal=",", header_row=header_row), detected
        )
    frame = convert_text(frame, detected, day_first=detected.decimal == "," or sep == ";")
    text_format: dict[str, str | None] = {
        "delimiter": sep,
        "decimal": detected.decimal,
        "thousands": detected.thousands,
        "encoding": encoding,
    }
    return Delimited(frame, text_format, detected, header_row)


def first_records(text: str, sep: str, count: int) -> list[list[str | None]]:
    """The first `count` records of delimited text, blank lines skipped as pandas skips them."""
    records: list[list[str | None]] = []
    reader = csv.reader(io.StringIO(text[: 4 << 20], newline=""), delimiter=sep)
    try:
        for record in reader:
            if record:
                records.append(list(record))
                if len(records) >= count:
                    break
    except csv.Error:
        pass  # a record cut by the sample's end: the records before it are what we need
    return records


def lines_before(text: str, sep: str, header_row: int) -> int:
    """How many lines (blank ones included, as a line-skipping reader counts them) come
    before the record `header_row` (blank lines not counted)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    seen = lines = 0
    for record in reader:
        if record:
            if seen == header_row:
                return lines
            seen += 1
        lines = reader.line_num
    return lines


def preview_csv(path: Path, name: str, header_row: int | None = None) -> Preview:
    """A delimited text file's preview from a head that grows until the first rows fit."""
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
                return preview_csv_head(
                    head, name=name, complete=complete, row_count=row_count, header_row=header_row
                )
            except NeedMoreBytes:
                if size >= CSV_HEAD_MAX_BYTES:
                    raise TooCostly(
                        f"{name} could not be read as CSV: its first {PREVIEW_ROWS} rows take more"
                        f" than {CSV_HEAD_MAX_BYTES >> 20} MB"
                    ) from None
                size *= 2


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
    best, best_key = ",", (0, 0.0, 0)
    for delimiter in _DELIMITERS:
        counts = [line.count(delimiter) for line in lines[:50]]
        # Title rows above the table may hold no delimiter: judge from the first line that
        # does, preferring a delimiter found earlier.
        lead = next((at for at, count in enumerate(counts[:HEADER_LOOK]) if count), 0)
        counts = counts[lead:]
        if counts and counts[0]:
            same = sum(count == counts[0] for count in counts) / len(counts)
            key = (-lead, same, counts[0])
            if key > best_key:
                best, best_key = delimiter, key
    return best


def _read_csv(
    text: str, sep: str, name: str, *, nrows: int, decimal: str = ".", header_row: int = 0
) -> pd.DataFrame:
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=sep, nrows=nrows, decimal=decimal, header=header_row
        )
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

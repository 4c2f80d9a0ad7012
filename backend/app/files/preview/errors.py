"""The ways a preview fails, as typed errors the API renders with their status and code,
and the sentences that name the file and the cause in words.
"""

from __future__ import annotations

import json
import re
import zipfile

from app.errors import AppError
from app.files.preview.kinds import KIND_LABELS, TabularKind

_RAGGED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


class PreviewError(AppError):
    """A preview failure: a sentence naming the file and a `code` (422 unless its kind says
    otherwise, see app.api.errors)."""

    code = "unreadable_file"


class PreviewUnsupported(PreviewError):
    """The file type is not one we preview."""

    code = "preview_unsupported"


class UnreadableFile(PreviewError):
    """The file claims a tabular type but cannot be parsed as one."""


class TooCostly(UnreadableFile):
    """The file may well be fine, but previewing it would cost more than its bounds allow."""


class SheetNotFound(PreviewError):
    """The workbook has no worksheet of the name asked for."""

    code = "sheet_not_found"


class NotAWorkbook(PreviewError):
    """A sheet was asked for in a file that has none."""

    code = "not_a_workbook"


class UnknownColumn(PreviewError):
    """A page was asked sorted by a column the table does not have."""

    code = "unknown_column"


class BadHeaderRow(PreviewError):
    """The header row asked for is not among the file's rows."""

    code = "bad_header_row"


def header_past_end(name: str, header_row: int, rows: int) -> BadHeaderRow:
    return BadHeaderRow(
        f"{name} has only {rows:,} rows, so row {header_row:,} (counted from 0) cannot be its"
        " header row."
    )


def no_header_row(name: str) -> BadHeaderRow:
    return BadHeaderRow(
        f"{name} has no header row to choose: only CSV files and Excel sheets have one."
    )


def unreadable(name: str, kind: TabularKind, exc: Exception) -> UnreadableFile:
    """The error for a file that failed to parse as `kind`, naming the cause in words."""
    return UnreadableFile(f"{name} could not be read as {KIND_LABELS[kind]}: {describe(exc)}")


def no_sheets(name: str) -> NotAWorkbook:
    return NotAWorkbook(f"{name} has no sheets: only Excel workbooks do.")


def sheet_not_found(name: str, sheet: str, titles: list[str]) -> SheetNotFound:
    listed = ", ".join(f'"{title}"' for title in titles)
    return SheetNotFound(f'{name} has no sheet named "{sheet}". Its sheets: {listed}.')


def describe(exc: Exception) -> str:
    """The cause of a failed parse in words, for the sentence that names the file."""
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

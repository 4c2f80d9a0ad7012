"""Tabular previews of uploaded dataset files: columns with dtypes, the first rows, a row count.

`preview_file` picks a file's reader by its kind (kinds.py): delimited text (delimited.py,
its rows counted by counting.py), Excel workbooks (workbook.py), Parquet (parquet.py), JSON
and JSON lines (json_tables.py). Each builds the same `Preview` (table.py) and fails with
the typed errors of errors.py. The names callers use are exported here.
"""

from __future__ import annotations

from pathlib import Path

from app.files.preview.counting import CsvRowCounter
from app.files.preview.delimited import NeedMoreBytes, preview_csv, preview_csv_head
from app.files.preview.errors import (
    BadHeaderRow,
    NotAWorkbook,
    PreviewError,
    PreviewUnsupported,
    SheetNotFound,
    TooCostly,
    UnknownColumn,
    UnreadableFile,
    no_header_row,
    no_sheets,
    sheet_not_found,
    unreadable,
)
from app.files.preview.json_tables import preview_json, preview_jsonl
from app.files.preview.kinds import TABULAR_KINDS, TabularKind, preview_kind
from app.files.preview.parquet import preview_parquet
from app.files.preview.table import PREVIEW_ROWS, Preview, jsonable
from app.files.preview.workbook import preview_excel

__all__ = [
    "PREVIEW_ROWS",
    "TABULAR_KINDS",
    "BadHeaderRow",
    "CsvRowCounter",
    "NeedMoreBytes",
    "NotAWorkbook",
    "Preview",
    "PreviewError",
    "PreviewUnsupported",
    "SheetNotFound",
    "TabularKind",
    "TooCostly",
    "UnknownColumn",
    "UnreadableFile",
    "jsonable",
    "no_header_row",
    "no_sheets",
    "preview_csv_head",
    "preview_file",
    "preview_kind",
    "sheet_not_found",
    "tabular_kind",
    "unreadable",
]

_READERS = {"parquet": preview_parquet, "json": preview_json, "jsonl": preview_jsonl}


def preview_file(
    path: Path, *, name: str, sheet: str | None = None, header_row: int | None = None
) -> Preview:
    """Builds the preview of a local file of any tabular kind, reading only what it needs.

    Args:
        path: The local file.
        name: The file's user-facing name: its extension picks the kind; errors quote it.
        sheet: The worksheet of a workbook to preview (None: the first).
        header_row: The row of column names of a CSV or worksheet (None: the one detected).

    Raises:
        PreviewUnsupported: The extension is not a tabular kind.
        UnreadableFile: The file cannot be parsed as its kind.
        NotAWorkbook: A sheet was asked of a file that is not a workbook.
        SheetNotFound: The workbook has no worksheet of that name.
        BadHeaderRow: `header_row` is past the rows, or asked of a kind without one.
    """
    kind = tabular_kind(name)
    if sheet is not None and kind != "excel":
        raise no_sheets(name)
    if header_row is not None and kind not in ("csv", "excel"):
        raise no_header_row(name)
    path.stat()  # a missing file is our fault, not an unreadable upload
    try:
        if kind == "excel":
            return preview_excel(path, name, sheet, header_row)
        if kind == "csv":
            return preview_csv(path, name, header_row)
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

"""Column profiles of uploaded dataset files: type, missing and distinct counts, range or
the most frequent values of each column, over a bounded sample of the rows.

Like previews, profiles run in the killable preview child process (preview_process); the
sample is bounded by rows, by cells and (for text files) by bytes, and the profile says how
many rows it covers and whether that is the whole file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from app.files.detect import Detected, convert_text
from app.files.preview import (
    PreviewError,
    TabularKind,
    jsonable,
    no_sheets,
    tabular_kind,
    unreadable,
)
from app.files.preview.delimited import complete_records, decode_text, read_delimited
from app.files.preview.json_tables import read_json_lines, read_json_table
from app.files.preview.table import cell
from app.files.preview.workbook import header_row_of, open_worksheet, read_worksheet

# The most rows profiled...
PROFILE_MAX_ROWS = 100_000
# ...and cells (rows times columns): a wide table gets fewer rows.
PROFILE_MAX_CELLS = 5_000_000
# Excel cells are parsed one by one (about 100,000 a second): fewer of them.
EXCEL_PROFILE_MAX_CELLS = 500_000
# The first bytes of a delimited text file that are profiled.
PROFILE_MAX_BYTES = 16 << 20
# The most frequent values listed for a text column, and the characters kept of each.
TOP_VALUES = 5
TOP_VALUE_CHARS = 100


def sample_rows(columns: int, max_cells: int = PROFILE_MAX_CELLS) -> int:
    """How many rows of a table with `columns` columns are profiled."""
    return max(100, min(PROFILE_MAX_ROWS, max_cells // max(columns, 1)))


def profile_frame(
    frame: pd.DataFrame, *, complete: bool, detected: Detected | None = None
) -> dict[str, Any]:
    """The profile of a table's rows.

    Args:
        frame: The rows profiled (text columns already converted where they hold numbers
            or dates).
        complete: Whether these are all the rows of the file or sheet.
        detected: How its text columns were read: the cells of a column that mixes kinds
            that could not be read are counted apart from the empty ones.

    Returns:
        `{rows_profiled, complete, columns: [{name, dtype, kind, missing, unreadable,
        distinct, min, max, mean, top}]}`; `kind` is number, datetime, boolean or text;
        `missing` counts empty cells, `unreadable` the cells that could not be read as the
        column's kind; min, max and mean are given for numbers and datetimes, `top`
        (`[{value, count}]`, most frequent first) for booleans and text.
    """
    mixed = (detected or Detected()).mixed
    return {
        "rows_profiled": len(frame),
        "complete": complete,
        "columns": [
            _column(
                str(name), column, len(mixed[str(name)].unreadable) if str(name) in mixed else 0
            )
            for name, column in frame.items()
        ],
    }


# What a profile's number column takes from its preview's column, to show its values with.
_FORMATS = ("unit", "currency", "currencies", "decimals")


def with_formats(profile: dict[str, Any], columns: list[dict[str, Any]]) -> dict[str, Any]:
    """A profile whose number columns carry their preview column's currency (or
    currencies), unit and decimals, the mean given at those decimals (a percent column's
    as a fraction: two more)."""
    specs = {str(column.get("name")): column for column in columns}
    out = []
    for profiled in profile["columns"]:
        spec = specs.get(str(profiled["name"]), {})
        if profiled.get("kind") != "number":
            out.append(profiled)
            continue
        formats = {key: spec[key] for key in _FORMATS if spec.get(key) is not None}
        decimals = formats.get("decimals")
        mean = profiled.get("mean")
        if isinstance(decimals, int) and isinstance(mean, float):
            places = decimals + 2 if formats.get("unit") == "%" else decimals
            profiled = profiled | {"mean": round(mean, places)}
        out.append(profiled | formats)
    return profile | {"columns": out}


def _column(name: str, column: pd.Series, unread: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "dtype": str(column.dtype),
        "missing": int(column.isna().sum()) - unread,
        "unreadable": unread,
        "min": None,
        "max": None,
        "mean": None,
        "top": None,
    }
    values = column.dropna()
    if pd.api.types.is_bool_dtype(column.dtype):
        kind = "boolean"
    elif pd.api.types.is_numeric_dtype(column.dtype):
        kind = "number"
    elif pd.api.types.is_datetime64_any_dtype(column.dtype):
        kind = "datetime"
    else:
        kind = "text"
        # Lists and objects (from JSON) are counted by their JSON text.
        values = values.map(_text)
    out["kind"] = kind
    out["distinct"] = int(values.nunique())
    if kind in ("number", "datetime") and not values.empty:
        out["min"], out["max"] = cell(values.min()), cell(values.max())
        mean = values.mean()
        out["mean"] = jsonable(mean) if kind == "datetime" else _finite(float(mean))
    elif kind in ("boolean", "text"):
        out["top"] = _top(values)
    return out


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict | tuple | np.ndarray):
        return json.dumps(jsonable(value), ensure_ascii=False, sort_keys=True)
    return str(jsonable(value))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _top(values: pd.Series) -> list[dict[str, Any]]:
    """The most frequent values, most first; ties in the order of their text."""
    counts = values.value_counts()
    if len(counts) > TOP_VALUES:
        counts = counts[counts >= counts.iloc[TOP_VALUES - 1]]
    ranked = sorted(counts.items(), key=lambda item: (-int(item[1]), str(item[0])))
    return [{"value": _shown(value), "count": int(count)} for value, count in ranked[:TOP_VALUES]]


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TOP_VALUE_CHARS:
        return value[: TOP_VALUE_CHARS - 1] + "…"
    return jsonable(value)


def profile_csv_head(
    head: bytes, *, name: str, complete: bool, header_row: int | None = None
) -> dict[str, Any]:
    """Profiles the first rows of a delimited text file from its first bytes.

    Args:
        head: The file's first bytes (at most PROFILE_MAX_BYTES).
        name: The file name, for the delimiter (.tsv/.tab) and for error messages.
        complete: Whether `head` is the whole file.
        header_row: The record that holds the column names (None: the one detected).

    Raises:
        UnreadableFile: The bytes are not text or not a consistent table.
    """
    try:
        frame, whole, detected = _csv_sample(head, name, complete, header_row)
    except (PreviewError, MemoryError):
        raise
    except Exception as exc:
        raise unreadable(name, "csv", exc) from exc
    return profile_frame(frame, complete=whole, detected=detected)


def _csv_sample(
    head: bytes, name: str, complete: bool, header_row: int | None = None
) -> tuple[pd.DataFrame, bool, Detected]:
    text, encoding = decode_text(head, name=name, complete=complete)
    if not complete:
        text = complete_records(text)
    if not text.strip():
        return pd.DataFrame(), complete, Detected()
    header = read_delimited(text, name=name, encoding=encoding, nrows=1, header_row=header_row)
    nrows = sample_rows(header.frame.shape[1])
    read = read_delimited(text, name=name, encoding=encoding, nrows=nrows, header_row=header_row)
    return read.frame, complete and len(read.frame) < nrows, read.detected


def profile_file(
    path: Path, *, name: str, sheet: str | None = None, header_row: int | None = None
) -> dict[str, Any]:
    """Profiles the first rows of a local file of any tabular kind.

    Args:
        path: The local file.
        name: The file's user-facing name: its extension picks the kind; errors quote it.
        sheet: The worksheet of a workbook (None: the first).
        header_row: The row of column names of a CSV or worksheet (None: the one detected).

    Raises:
        PreviewUnsupported: The extension is not a tabular kind.
        UnreadableFile: The file cannot be parsed as its kind.
        NotAWorkbook: A sheet was asked of a file that is not a workbook.
        SheetNotFound: The workbook has no worksheet of that name.
    """
    kind = tabular_kind(name)
    if sheet is not None and kind != "excel":
        raise no_sheets(name)
    try:
        frame, complete, detected = _sample(kind, path, name, sheet, header_row)
    except (PreviewError, MemoryError):
        raise
    except Exception as exc:
        raise unreadable(name, kind, exc) from exc
    return profile_frame(frame, complete=complete, detected=detected)


def _sample(
    kind: TabularKind, path: Path, name: str, sheet: str | None, header_row: int | None
) -> tuple[pd.DataFrame, bool, Detected]:
    """The rows to profile, whether they are all the rows, and how their text was read."""
    if kind == "csv":
        with path.open("rb") as file:
            head = file.read(PROFILE_MAX_BYTES)
            whole = not file.read(1)
        return _csv_sample(head, name, whole, header_row)
    if kind == "excel":
        _, chosen = open_worksheet(path, name, sheet)
        row = header_row_of(path, name, chosen, header_row)
        header, _ = read_worksheet(path, name, chosen, 0, row)
        nrows = sample_rows(header.shape[1], EXCEL_PROFILE_MAX_CELLS)
        frame, detected = read_worksheet(path, name, chosen, nrows, row)
        return frame, len(frame) < nrows, detected
    if kind == "parquet":
        with pq.ParquetFile(path) as parquet:
            nrows = sample_rows(len(parquet.schema_arrow.names))
            batches, read = [], 0
            for batch in parquet.iter_batches(batch_size=min(nrows, 65_536)):
                batches.append(batch.slice(0, nrows - read))
                read += len(batches[-1])
                if read >= nrows:
                    break
            table = (
                pa.Table.from_batches(batches, parquet.schema_arrow)
                if batches
                else parquet.schema_arrow.empty_table()
            )
            return table.to_pandas(), parquet.metadata.num_rows <= len(table), Detected()
    if kind == "json":
        frame = read_json_table(path, name)
        nrows = sample_rows(frame.shape[1])
        dated, detected = _dated(frame.head(nrows))
        return dated, len(frame) <= nrows, detected
    with path.open("rb") as file:
        records = read_json_lines(file, name, PROFILE_MAX_ROWS + 1)
    frame = pd.json_normalize(records[:PROFILE_MAX_ROWS])
    nrows = sample_rows(frame.shape[1])
    dated, detected = _dated(frame.head(nrows))
    return dated, len(records) <= nrows, detected


def _dated(frame: pd.DataFrame) -> tuple[pd.DataFrame, Detected]:
    detected = Detected()
    return convert_text(frame.copy(), detected, day_first=False), detected

"""How much memory a tabular file takes once loaded whole into pandas, estimated from its
preview (the column types, the row count and the first rows' text), and whether that is
too much for a sandbox worker: such a file is read with DuckDB instead (the agent is told).
"""

from __future__ import annotations

from typing import Any

# Bytes per value of a column by its pandas dtype; text is its sample length plus these.
_FIXED = {"bool": 1, "boolean": 1}
_NUMBER_BYTES = 8
_ARROW_TEXT_OVERHEAD = 8  # pandas' Arrow-backed strings: an offset per value
_OBJECT_TEXT_OVERHEAD = 57  # a Python str object (49 bytes and up) and its pointer
# What pandas holds at its peak while reading a file, over the frame it ends with.
READ_PEAK = 2
# The part of a worker's memory a file loaded whole may take at its peak: the rest holds
# Python and the libraries (about a quarter of a 2 GB worker) and the work that follows.
LOADABLE_SHARE = 0.5


def pandas_bytes(preview: dict[str, Any]) -> int:
    """The estimated size of the DataFrame pandas makes of the whole table.

    Args:
        preview: The file's stored preview (`columns` with `dtype`, `rows`, `row_count`).
    """
    columns = [c for c in preview.get("columns") or [] if isinstance(c, dict)]
    rows = preview.get("rows") or []
    row_count = int(preview.get("row_count") or 0)
    per_row = 0.0
    for at, column in enumerate(columns):
        per_row += _value_bytes(str(column.get("dtype", "")), [r[at] for r in rows if at < len(r)])
    return int(per_row * row_count)


def _value_bytes(dtype: str, samples: list[Any]) -> float:
    if dtype in _FIXED:
        return _FIXED[dtype]
    if dtype.lower().startswith(("int", "uint", "float", "datetime", "timedelta")):
        return _NUMBER_BYTES
    texts = [str(value) for value in samples if value is not None]
    length = sum(len(text.encode()) for text in texts) / len(texts) if texts else 8.0
    overhead = _ARROW_TEXT_OVERHEAD if dtype in ("str", "string") else _OBJECT_TEXT_OVERHEAD
    return length + overhead


def too_big_for_pandas(preview: dict[str, Any], file_size: int, memory_mb: int) -> int | None:
    """Whether loading the whole file into pandas would not fit in a worker's memory.

    Args:
        preview: The file's stored preview.
        file_size: The file's size in bytes (a text file is read through whole).
        memory_mb: The worker's memory limit.

    Returns:
        When pandas (at the peak of reading), or the file itself, would take too much of
        the worker: the estimate of what the file takes in pandas, at least its own size.
        None when the file can be loaded whole.
    """
    estimate = pandas_bytes(preview)
    room = memory_mb * (1 << 20) * LOADABLE_SHARE
    if max(estimate * READ_PEAK, file_size) > room:
        return max(estimate, file_size)
    return None

"""The floating-point columns of a snapshot's DataFrames as raw bytes (`vN.raw`, beside the
Parquet file of the other columns: `frames.py`), mapped back copy-on-write, in the worker.

A new worker (a session's after a restart, a branch's, each attempt's of a question) gets
these columns without reading them: the file is mapped privately (MAP_PRIVATE), so a page
comes from the page cache when the code first touches it, and is copied only when the code
writes it; the file never changes (the next snapshot is written beside it, and a replaced
file stays whole for as long as it is mapped). Restoring a 200 MB numeric frame takes
milliseconds, where decoding it from Parquet took 0.1-0.4 s of a worker's CPU — three
times over for a question asked with three attempts. Floats only: they seldom compress,
so the raw file is the size their Parquet was; integers, text and the rest compress well
and stay in Parquet.

The layout is in the variable's manifest entry, `raw`: the file, the rows, and each
column's position in the frame, name, dtype (little-endian floats) and offset (aligned to
ALIGN). It is checked on the way back: the worker's own earlier code could have written
both the file and the manifest. A file that the code truncates while mapped ends its own
worker (SIGBUS) and no other: each worker maps its own copy.
"""

from __future__ import annotations

import mmap
import os
import stat
import sys
from pathlib import Path
from typing import Any

from app.sandbox.snapshot_format import Unsaveable, valid_file_name

SUFFIX = ".raw"
ALIGN = 64
DTYPES = frozenset({"<f2", "<f4", "<f8"})
MAX_COLUMNS = 100_000
MAX_NAME_CHARS = 1000


def positions(frame: Any) -> list[int]:
    """The positions of the frame's columns that go raw: plain little-endian floats."""
    numpy = sys.modules["numpy"]
    return [
        position
        for position, dtype in enumerate(frame.dtypes)
        if isinstance(dtype, numpy.dtype) and dtype.str in DTYPES
    ]


def write(frame: Any, chosen: list[int], path: Path, budget: int) -> dict[str, Any]:
    """Write the chosen columns (all names are strings by now) one after another; the
    manifest's `raw` entry.

    Raises:
        Unsaveable: They take more than `budget` bytes.
    """
    numpy = sys.modules["numpy"]
    columns: list[list[Any]] = []
    offset = 0
    with open(path, "wb") as handle:
        for position in chosen:
            values = numpy.ascontiguousarray(frame.iloc[:, position].to_numpy())
            padding = -offset % ALIGN
            if offset + padding + values.nbytes > budget:
                raise Unsaveable("too_large")
            handle.write(b"\0" * padding)
            offset += padding
            handle.write(values.data.cast("B"))
            columns.append([position, str(frame.columns[position]), values.dtype.str, offset])
            offset += values.nbytes
    return {"file": path.name, "rows": len(frame), "columns": columns}


def read(folder: Path, raw: Any, width: int) -> dict[int, tuple[str, Any]]:
    """Map the raw columns back: each one's position → (name, array). The arrays are
    writable views of the private mapping.

    Args:
        width: How many columns the frame has in all (raw and Parquet).

    Raises:
        ValueError: The entry or the file is not one `write` made.
    """
    numpy = sys.modules["numpy"]
    if not isinstance(raw, dict):
        raise ValueError("not a raw columns entry")
    file = valid_file_name(raw.get("file"))
    rows, columns = raw.get("rows"), raw.get("columns")
    if not file.endswith(SUFFIX) or not _count(rows):
        raise ValueError("not a raw columns entry")
    if not isinstance(columns, list) or len(columns) > min(width, MAX_COLUMNS):
        raise ValueError("not a list of raw columns")
    descriptor = os.open(folder / file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("a raw columns file that is not a file")
        size = info.st_size
        mapped = _map(descriptor, size) if size else None
    finally:
        os.close(descriptor)
    found: dict[int, tuple[str, Any]] = {}
    for column in columns:
        position, name, dtype, offset = _column(column, width)
        itemsize = numpy.dtype(dtype).itemsize
        if position in found or offset % itemsize or offset + rows * itemsize > size:
            raise ValueError("a raw column outside its file")
        if mapped is None or rows == 0:
            values = numpy.empty(0, dtype=dtype)
        else:
            values = numpy.frombuffer(mapped, dtype=dtype, count=rows, offset=offset)
        found[position] = (name, values)
    return found


def _map(descriptor: int, size: int) -> mmap.mmap | bytearray:
    """The file mapped privately; read into memory where it cannot be mapped (a file system
    without mmap)."""
    try:
        return mmap.mmap(
            descriptor, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE
        )
    except OSError:
        read = bytearray(size)
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            if handle.readinto(read) != size:
                raise ValueError("a raw columns file that changed as it was read") from None
        return read


def _column(column: Any, width: int) -> tuple[int, str, str, int]:
    if not isinstance(column, list) or len(column) != 4:
        raise ValueError("not a raw column")
    position, name, dtype, offset = column
    if not (_count(position) and position < width and _count(offset)):
        raise ValueError("not a raw column")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or dtype not in DTYPES:
        raise ValueError("not a raw column")
    return position, name, dtype, offset


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0

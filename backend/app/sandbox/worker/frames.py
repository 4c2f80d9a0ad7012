"""DataFrames in a session's snapshot (`snapshot.py`), in the worker.

A frame is written as an Arrow IPC file (`vN.arrow`): its columns' memory as it is, so
restoring it is little more than a read (Parquet had to be decoded, about 20x slower for
a numeric frame). A frame with text (or bytes, or categories) is Zstandard-compressed,
which keeps its file near Parquet's size (LZ4 made it nearly twice that); a frame of numbers only
is not compressed (random floats do not compress, and decompressing would cost what the
format saves). Snapshots
written before (`vN.parquet`) are still read. The same frame gives the same bytes (no
timestamps in either format), which the chunked storage of states relies on
(app/runs/snapshot_chunks.py). Nothing here unpickles: both formats are data, decoded
only here, in the worker.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.sandbox.snapshot_format import CHUNK_BYTES, Unsaveable
from app.sandbox.worker.values import decode, encode

SUFFIX = ".arrow"


def write_frame(frame: Any, path: Path, budget: int) -> dict[str, Any]:
    """Write a DataFrame as an Arrow IPC file, a slice at a time; the labels Arrow cannot
    keep go into the returned manifest entry.

    Raises:
        Unsaveable: The file would take more than `budget` bytes.
    """
    import pyarrow as pa
    import pyarrow.ipc as ipc

    pandas = sys.modules["pandas"]
    extra: dict[str, Any] = {}
    columns = frame.columns
    if (
        not all(isinstance(c, str) for c in columns)
        or columns.has_duplicates
        or isinstance(columns, pandas.MultiIndex)
    ):
        extra["columns"] = encode(list(columns))
        extra["column_levels"] = encode(list(columns.names))
        extra["multi"] = isinstance(columns, pandas.MultiIndex)
        frame = frame.set_axis([f"c{i}" for i in range(len(columns))], axis=1)
    index = frame.index
    keep_index = True
    if isinstance(index, pandas.RangeIndex):
        extra["range_index"] = [index.start, index.stop, index.step, encode(index.name)]
        frame = frame.reset_index(drop=True)
        keep_index = False
    rows = len(frame)
    row_bytes = max(1, int(frame.memory_usage(index=True, deep=False).sum()) // max(1, rows))
    step = max(1, CHUNK_BYTES // row_bytes)
    schema = None
    writer = None
    sink = pa.OSFile(str(path), "wb")
    try:
        for start in range(0, max(rows, 1), step):
            table = pa.Table.from_pandas(
                frame.iloc[start : start + step], schema=schema, preserve_index=keep_index
            )
            if writer is None:
                schema = table.schema
                options = ipc.IpcWriteOptions(
                    compression="zstd" if _has_text(schema) else None, use_threads=False
                )
                writer = ipc.new_file(sink, schema, options=options)
            writer.write_table(table)
            del table
            if sink.tell() > budget:
                raise Unsaveable("too_large")
    finally:
        try:
            if writer is not None:
                writer.close()
        finally:
            sink.close()
    if path.stat().st_size > budget:
        raise Unsaveable("too_large")
    return extra


def _has_text(schema: Any) -> bool:
    import pyarrow as pa

    def texty(kind: Any) -> bool:
        if pa.types.is_dictionary(kind):
            return True
        if pa.types.is_nested(kind):
            return any(texty(kind.field(i).type) for i in range(kind.num_fields))
        return bool(
            pa.types.is_string(kind)
            or pa.types.is_large_string(kind)
            or pa.types.is_string_view(kind)
            or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind)
            or pa.types.is_binary_view(kind)
        )

    return any(texty(field.type) for field in schema)


def read_frame(path: Path, entry: dict[str, Any]) -> Any:
    """The DataFrame a snapshot file holds (Arrow IPC, or Parquet for older snapshots)."""
    pandas = sys.modules["pandas"]
    frame = _read_arrow(path) if path.suffix == SUFFIX else _read_parquet(path)
    if "range_index" in entry:
        start, stop, step, name = entry["range_index"]
        frame.index = pandas.RangeIndex(int(start), int(stop), int(step), name=decode(name))
    if "columns" in entry:
        labels = decode(entry["columns"])
        names = decode(entry.get("column_levels"))
        if entry.get("multi"):
            frame.columns = pandas.MultiIndex.from_tuples(labels, names=names)
        else:
            frame.columns = pandas.Index(labels, name=names[0] if names else None)
    return frame


def _read_arrow(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    # Read into Arrow's memory, not mapped (a frame left pointing into the file would keep
    # it mapped, read-only, at the mercy of code truncating it), then handed to pandas
    # without a copy where the layout allows, each column's Arrow memory freed as it is
    # converted. Measured against a memory map and a column at a time, the fastest.
    with pa.OSFile(str(path)) as source:
        table = ipc.open_file(source).read_all()
    # A file the session's code may have written: every offset and length checked before
    # pandas reads through them.
    table.validate(full=True)
    return table.to_pandas(split_blocks=True, self_destruct=True)


def _read_parquet(path: Path) -> Any:
    import pyarrow.parquet as pq

    pandas = sys.modules["pandas"]
    # A column at a time, each freed from Arrow's memory once converted: reading the whole
    # table first would need the frame's size twice over (a 1 GB frame could not come back
    # into a worker with 3 GB). The pandas metadata still gives each column its dtype.
    parquet = pq.ParquetFile(path)
    metadata = parquet.schema_arrow.pandas_metadata or {}
    stored_index = [c for c in metadata.get("index_columns", []) if isinstance(c, str)]
    parts: list[Any] = []
    for name in parquet.schema_arrow.names:
        if name in stored_index:
            continue
        table = parquet.read(columns=[name], use_threads=False, use_pandas_metadata=True)
        part = table.to_pandas(self_destruct=True, split_blocks=True)
        del table
        if parts:
            part.index = parts[0].index
        parts.append(part)
    if not parts:
        return parquet.read(use_pandas_metadata=True).to_pandas()
    return pandas.concat(parts, axis=1) if len(parts) > 1 else parts[0]

"""DataFrames in a session's snapshot (`snapshot.py`), in the worker: written as Parquet
(`vN.parquet`), but for plain floating-point columns, which go beside it as raw bytes that
a new worker maps instead of reading (`raw_columns.py`; floats left in Parquet, such as
nullable ones, without a dictionary or compression). The same frame gives the same bytes
(pyarrow's Parquet writer puts no timestamps in its metadata), which the chunked storage of
states relies on (app/runs/snapshot_chunks.py). Nothing here unpickles.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.sandbox.snapshot_format import CHUNK_BYTES, Unsaveable
from app.sandbox.worker import raw_columns
from app.sandbox.worker.values import decode, encode

SUFFIX = ".parquet"


def write_frame(frame: Any, path: Path, budget: int) -> dict[str, Any]:
    """Write a DataFrame as Parquet, a slice at a time; the labels pyarrow cannot keep go
    into the returned manifest entry."""
    import pyarrow as pa
    import pyarrow.parquet as pq

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
    raw = raw_columns.positions(frame)
    if raw:  # floats beside the Parquet file, as raw bytes (raw_columns.py)
        raw_path = path.with_suffix(raw_columns.SUFFIX)
        extra["raw"] = raw_columns.write(frame, raw, raw_path, budget)
        budget -= raw_path.stat().st_size
        taken = set(raw)
        frame = frame.iloc[:, [i for i in range(frame.shape[1]) if i not in taken]]
    rows = len(frame)
    row_bytes = max(1, int(frame.memory_usage(index=True, deep=False).sum()) // max(1, rows))
    step = max(1, CHUNK_BYTES // row_bytes)
    schema = None
    writer = None
    try:
        for start in range(0, max(rows, 1), step):
            table = pa.Table.from_pandas(
                frame.iloc[start : start + step], schema=schema, preserve_index=keep_index
            )
            if writer is None:
                schema = table.schema
                # Floats: no dictionary (rarely repeated, 3x slower both ways) and no
                # compression (it rarely shrinks them, and restoring a snappy column takes
                # 4x as long in a new worker: a 200 MB frame 0.4 s against 0.1 s).
                floats = {f.name for f in schema if pa.types.is_floating(f.type)}
                coded = [f.name for f in schema if f.name not in floats]
                codecs = {f.name: "NONE" if f.name in floats else "SNAPPY" for f in schema}
                writer = pq.ParquetWriter(path, schema, use_dictionary=coded, compression=codecs)
            writer.write_table(table)
            del table
            if path.stat().st_size > budget:
                raise Unsaveable("too_large")
    finally:
        if writer is not None:
            writer.close()
    if path.stat().st_size > budget:
        raise Unsaveable("too_large")
    return extra


def read_frame(path: Path, entry: dict[str, Any]) -> Any:
    import pyarrow.parquet as pq

    pandas = sys.modules["pandas"]
    # A column at a time, each freed from Arrow's memory once converted: reading the whole
    # table first would need the frame's size twice over (a 1 GB frame could not come back
    # into a worker with 3 GB). The pandas metadata still gives each column its dtype.
    parquet = pq.ParquetFile(path)
    metadata = parquet.schema_arrow.pandas_metadata or {}
    stored_index = [c for c in metadata.get("index_columns", []) if isinstance(c, str)]
    stored = [name for name in parquet.schema_arrow.names if name not in stored_index]
    raw = entry.get("raw")
    width = len(stored) + (len(raw.get("columns") or []) if isinstance(raw, dict) else 0)
    mapped = raw_columns.read(path.parent, raw, width) if raw is not None else {}
    parts: list[Any] = []
    for name in stored:
        table = parquet.read(columns=[name], use_threads=False, use_pandas_metadata=True)
        part = table.to_pandas(self_destruct=True, split_blocks=True)
        del table
        if parts:
            part.index = parts[0].index  # one index object: nothing to align or copy
        parts.append(part)
    if mapped:
        frame = _with_raw(parquet, parts, mapped, width, stored_index)
    elif not parts:  # a frame with an index and no columns
        frame = parquet.read(use_pandas_metadata=True).to_pandas()
    else:
        frame = pandas.concat(parts, axis=1) if len(parts) > 1 else parts[0]
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


def _with_raw(
    parquet: Any,
    parts: list[Any],
    mapped: dict[int, tuple[str, Any]],
    width: int,
    stored_index: list[str],
) -> Any:
    """The frame from its Parquet columns and its mapped raw ones, each in its place, on
    one index (none of the arrays copied)."""
    pandas = sys.modules["pandas"]
    if parts:
        index = parts[0].index
    elif stored_index:  # every column raw: the Parquet file holds the index only
        index = parquet.read(use_pandas_metadata=True).to_pandas().index
    else:
        index = pandas.RangeIndex(len(next(iter(mapped.values()))[1]))
    pending = iter(parts)
    ordered: list[Any] = []
    for position in range(width):
        if position in mapped:
            name, values = mapped[position]
            ordered.append(pandas.DataFrame({name: values}, index=index, copy=False))
        else:
            ordered.append(next(pending))
    return pandas.concat(ordered, axis=1) if len(ordered) > 1 else ordered[0]

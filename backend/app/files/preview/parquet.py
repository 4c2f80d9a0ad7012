"""Previews of Parquet files: the first rows of the first batch, the row count from the
file's metadata.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from app.files.preview.table import PREVIEW_ROWS, Preview, build_preview


def preview_parquet(path: Path, name: str) -> Preview:
    """A Parquet file's preview: its first batch, and the row count its metadata states."""
    with pq.ParquetFile(path) as parquet:
        batch = next(parquet.iter_batches(batch_size=PREVIEW_ROWS), None)
        table = pa.Table.from_batches([batch]) if batch else parquet.schema_arrow.empty_table()
        return build_preview(table.to_pandas(), parquet.metadata.num_rows)

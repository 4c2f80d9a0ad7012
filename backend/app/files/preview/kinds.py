"""Which tabular kind a file is, by its name's extension, and the kind's name in messages.

A file's kind picks the reader that previews and profiles it (CSV and other delimited text,
Excel, Parquet, JSON, JSON lines); any other file is not previewed.
"""

from __future__ import annotations

from typing import Literal, get_args

TabularKind = Literal["csv", "excel", "parquet", "json", "jsonl"]
TABULAR_KINDS: tuple[TabularKind, ...] = get_args(TabularKind)

_KIND_BY_EXT: dict[str, TabularKind] = {
    "csv": "csv", "tsv": "csv", "tab": "csv", "txt": "csv",
    "xlsx": "excel", "xlsm": "excel", "xls": "excel",
    "parquet": "parquet", "pq": "parquet",
    "json": "json", "jsonl": "jsonl", "ndjson": "jsonl",
}  # fmt: skip
KIND_LABELS: dict[TabularKind, str] = {
    "csv": "CSV", "excel": "Excel", "parquet": "Parquet", "json": "JSON", "jsonl": "JSON lines",
}  # fmt: skip


def preview_kind(name: str) -> TabularKind | None:
    """Returns the tabular kind of a file from its name's extension, or None if not previewable."""
    _, dot, ext = name.rpartition(".")
    return _KIND_BY_EXT.get(ext.lower()) if dot else None

"""The bytes the previews' cache holds of given contents: the typed Parquet copies, a
page's UTF-8 copy or Parquet table, each named after the content's SHA-256
(app.files.previewing, app.files.preview.paging).

A plain local copy of an object (named exactly its digest) is not counted: it holds the
same bytes as the version already counted, and is only a replica's cache of them; nor is
the whole file's decision of its columns' kinds (a few kilobytes of JSON, whole_kinds.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

DIGEST_LENGTH = 64


def copies_bytes(cache_dir: Path | None, digests: Iterable[str]) -> int:
    """Bytes on disk of the derived copies of these contents (blocking: call in a thread).

    One listing of the cache folder, whatever the number of digests.
    """
    wanted = set(digests)
    if cache_dir is None or not wanted:
        return 0
    total = 0
    try:
        entries = list(os.scandir(cache_dir))
    except OSError:
        return 0
    for entry in entries:
        digest, derived = entry.name[:DIGEST_LENGTH], len(entry.name) > DIGEST_LENGTH
        if derived and digest in wanted and not entry.name.startswith(".kinds.", DIGEST_LENGTH):
            total += _size(entry)
    return total


def _size(entry: os.DirEntry[str]) -> int:
    try:
        if entry.is_symlink():
            return 0
        if entry.is_dir():
            return sum(
                (Path(root) / name).stat().st_size
                for root, _, names in os.walk(entry.path)
                for name in names
            )
        return entry.stat().st_size
    except OSError:  # removed while counted
        return 0

"""A tabular file the code wrote, previewed like a dataset: a CSV's or Parquet's first rows,
a workbook's sheets to switch, pages and sorting over the whole table.

No second reader: the artifact is read by the datasets' own preview (app.files.previewing),
through a stand-in File row that is never stored. What the preview keeps in its cache (a
local copy where storage is S3, a workbook's table as Parquet) is removed once the page is
read: nothing would remove it later (an artifact is not a dataset, whose copies go with it),
and the cache must stay bounded.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

from app.files import previewing, whole_file_work
from app.files.preview import PreviewUnsupported, preview_kind
from app.files.preview.paging import Window
from app.infra.storage import ObjectStorage
from app.models import Artifact, File


def previewable(artifact: Artifact) -> bool:
    """Whether the artifact is a file of a kind the datasets' preview reads."""
    return artifact.kind == "file" and preview_kind(artifact.name) is not None


async def preview(
    storage: ObjectStorage,
    artifact: Artifact,
    cache_dir: Path,
    sheet: str | None,
    window: Window,
) -> dict[str, Any]:
    """The artifact's columns and rows `window` (of one sheet of a workbook).

    Raises:
        PreviewError: Not a tabular file (415), unreadable or too costly (422), no such
            sheet (404), as for a dataset.
    """
    if not previewable(artifact):
        raise PreviewUnsupported(
            f"{artifact.name}: previews are available for CSV, TSV, Excel, Parquet and JSON files."
        )
    # The cache names copies by a digest: one of the artifact's own, never a dataset's.
    digest = hashlib.sha256(f"artifact:{artifact.id}".encode()).hexdigest()
    stand_in = File(
        name=Path(artifact.name).name,
        storage_key=artifact.storage_key,
        size=artifact.size,
        sha256=digest,
        row_count=None,
        preview=None,
    )
    try:
        # No typed copy of a big CSV: that is for the project's datasets, read again and again.
        return await previewing.preview(
            storage, stand_in, cache_dir, sheet, window=window, copies=False, whole=False
        )
    finally:
        await asyncio.to_thread(whole_file_work.remove_copies, cache_dir, [digest])

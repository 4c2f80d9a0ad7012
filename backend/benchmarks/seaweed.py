"""What the storage benchmarks share: a SeaweedFS S3 server in a temporary folder, and the
app's S3 storage on it (started, then stopped and removed)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from app.config import Settings
from app.infra.storage import S3Storage
from tests.support import services


@asynccontextmanager
async def s3_storage(prefix: str, bucket: str) -> AsyncIterator[tuple[Path, S3Storage]]:
    """A temporary folder and an S3 storage on a SeaweedFS started in it."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        root = Path(folder)
        weed, s3 = services.start_seaweed(root)
        try:
            settings = Settings(
                S3_ENDPOINT=s3.endpoint,
                S3_ACCESS_KEY=s3.access_key,
                S3_SECRET_KEY=s3.secret_key,
                S3_BUCKET=bucket,
            )
            storage = S3Storage(settings)
            await storage.ensure_bucket()
            try:
                yield root, storage
            finally:
                await storage.close()
        finally:
            services.stop_seaweed(weed)
            shutil.rmtree(root, ignore_errors=True)

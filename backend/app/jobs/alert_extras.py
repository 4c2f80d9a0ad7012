"""What an alert message carries besides the run's values, looked up only when an alert
holds: the run's first chart drawn as a PNG (app.jobs.chart_image), for emails, and the
job's share link (app.shares.job_links), when an alert delivers to it."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.infra.storage import ObjectStorage
from app.jobs.chart_image import MAX_FIGURE_BYTES, ChartImage, chart_png
from app.models import Artifact
from app.shares import job_links
from app.shares.job_page import read_object
from app.sources.service import keyring_of


async def first_chart(
    factory: async_sessionmaker[AsyncSession], storage: ObjectStorage, run_id: uuid.UUID | None
) -> tuple[str, ChartImage] | None:
    """The name and image of the first chart the run showed (None: it showed none)."""
    if run_id is None:
        return None
    async with factory() as db:
        artifact = await db.scalar(
            select(Artifact)
            .where(Artifact.run_id == run_id, Artifact.kind == "plotly")
            .order_by(Artifact.created_at, Artifact.name)
            .limit(1)
        )
        if artifact is None:
            return None
        name, key = artifact.name, artifact.storage_key
    stem = name.rsplit(".", 1)[0] or "chart"
    data = await read_object(storage, key, MAX_FIGURE_BYTES)
    if data is None:
        return f"{stem}.png", ChartImage(None, f"The chart {stem} is too large or missing.")
    return f"{stem}.png", await chart_png(data, stem)


async def share_url(
    factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    job_id: uuid.UUID,
    project_id: uuid.UUID,
) -> str | None:
    """The job's share link that opens now (None: it has none)."""
    async with factory() as db:
        return await job_links.current_url(
            db, job_id, project_id, keyring_of(settings), settings.public_url
        )

"""The periodic sweep of snapshot chunks (issue 43), off every run's end.

Every SWEEP_SECONDS each replica takes the next PROJECTS_PER_PASS projects (in id order,
wrapping around) and, for each: drops the states beyond the bounds and deletes the chunks
nothing names (`state_retention.enforce`: those of deleted sessions too), then deletes the
*orphan* chunk objects — stored, with no row (a crash between a chunk's upload and its
row). A writer stores the object first and its row right after, so an object without a
row is deleted only when it was seen without one by an earlier pass at least `grace`
seconds before: a chunk being stored has its row long before then.

A pass does at most PROJECTS_PER_PASS projects' work, whatever the project count; the
replicas' passes may overlap, as the deletions are each checked again (see
state_retention).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field

from sqlalchemy import select

from app.config import Settings
from app.infra.storage import ObjectStorage
from app.models import Project, SnapshotChunk
from app.runs import state_retention
from app.runs.snapshot_chunks import DIGEST, Factory, prefix

log = logging.getLogger(__name__)

SWEEP_SECONDS = 300.0
PROJECTS_PER_PASS = 20


@dataclass
class ChunkSweeper:
    factory: Factory
    storage: ObjectStorage
    settings: Settings
    _cursor: uuid.UUID | None = None
    # Orphan objects seen by a pass, when first seen (time.monotonic()).
    _suspects: dict[str, float] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._forever())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _forever(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                await self.sweep_pass()
            except Exception:  # the next pass tries again
                log.exception("the snapshot chunk sweep failed")

    async def sweep_pass(
        self, grace_seconds: float = state_retention.GRACE_SECONDS, limit: int = PROJECTS_PER_PASS
    ) -> list[uuid.UUID]:
        """Sweep the next `limit` projects (see module); the projects swept."""
        async with self.factory() as db:
            query = select(Project.id).order_by(Project.id).limit(limit)
            if self._cursor is not None:
                query = query.where(Project.id > self._cursor)
            projects = list(await db.scalars(query))
        self._cursor = projects[-1] if len(projects) == limit else None  # else: wrap around
        for project_id in projects:
            await state_retention.enforce(
                self.factory,
                self.storage,
                project_id,
                self.settings.SNAPSHOT_KEEP_PER_SESSION,
                self.settings.SNAPSHOT_PROJECT_MAX_MB << 20,
                grace_seconds,
            )
            await self.orphans(project_id, grace_seconds)
        return projects

    async def orphans(self, project_id: uuid.UUID, grace_seconds: float) -> int:
        """Delete the project's chunk objects that have had no row since an earlier pass
        at least `grace_seconds` ago; how many."""
        keys = await self.storage.list_keys(prefix(project_id))
        async with self.factory() as db:
            rows = set(
                await db.scalars(
                    select(SnapshotChunk.sha256).where(SnapshotChunk.project_id == project_id)
                )
            )
        now, deleted = time.monotonic(), 0
        for key in keys:
            digest = key.rsplit("/", 1)[-1]
            if digest in rows and DIGEST.fullmatch(digest):
                self._suspects.pop(key, None)
                continue
            seen = self._suspects.get(key)
            if seen is None:
                self._suspects[key] = now
                continue
            if now - seen < grace_seconds:
                continue
            async with self.factory() as db:  # its row may have come meanwhile
                stored = await db.scalar(
                    select(SnapshotChunk.sha256).where(
                        SnapshotChunk.project_id == project_id, SnapshotChunk.sha256 == digest
                    )
                )
            self._suspects.pop(key, None)
            if stored is None:
                await self.storage.delete(key)
                deleted += 1
        if deleted:
            log.info("project %s: deleted %d orphan snapshot chunk(s)", project_id, deleted)
        return deleted

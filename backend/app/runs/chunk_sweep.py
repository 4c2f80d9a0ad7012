"""The periodic sweep of snapshot chunks (issue 43), off every run's end.

Every SWEEP_SECONDS each replica takes the next PROJECTS_PER_PASS projects (in id order,
wrapping around) and, for each: drops the states beyond the bounds and deletes the chunks
nothing names (`state_retention.enforce`: those of deleted sessions too), then deletes the
*orphan* chunk objects — stored, with no row (a crash between a chunk's upload and its
row). A writer stores the object first and its row right after, so an object without a
row is deleted only when it was seen without one by an earlier pass — of any replica: the
database keeps what was seen when (`orphans`) — at least `grace` seconds before: a chunk
being stored has its row long before then, and a writer that raced the deletion anyway
finds its tombstone and stores the bytes again.

A pass does at most PROJECTS_PER_PASS projects' work, whatever the project count; the
replicas' passes may overlap, as the deletions are each checked again (see
state_retention).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from app.config import Settings
from app.infra.storage import ObjectStorage
from app.models import Project, SnapshotChunk, SnapshotOrphanSuspect
from app.models.base import utcnow
from app.runs import state_retention
from app.runs.snapshot_chunks import BATCH, DIGEST, Factory, prefix

log = logging.getLogger(__name__)

SWEEP_SECONDS = 300.0
PROJECTS_PER_PASS = 20


@dataclass
class ChunkSweeper:
    factory: Factory
    storage: ObjectStorage
    settings: Settings
    _cursor: uuid.UUID | None = None
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
        """Delete the project's chunk objects that have had no row since a pass (of any
        replica) at least `grace_seconds` ago; how many (see `orphans`)."""
        return await orphans(self.factory, self.storage, project_id, grace_seconds)


async def orphans(
    factory: Factory, storage: ObjectStorage, project_id: uuid.UUID, grace_seconds: float
) -> int:
    """Delete the project's orphan chunk objects (stored, no row), as the database decides.

    Each object seen without a row is recorded (`snapshot_orphan_suspects`, shared by the
    replicas) when first seen. One seen so at least `grace_seconds` ago is claimed by a
    single UPDATE (one replica wins; the row stays locked until its commit), checked once
    more for a row in that transaction, deleted, and left as a tombstone: a writer that
    stored those bytes just before and adds its row after sees the tombstone as it clears
    it and stores them again (`snapshot_chunks.ChunkWriter`). Tombstones and suspects whose
    object is gone or has its row go after the grace period.
    """
    keys = await storage.list_keys(prefix(project_id))
    async with factory() as db:
        rows = set(
            await db.scalars(
                select(SnapshotChunk.sha256).where(SnapshotChunk.project_id == project_id)
            )
        )
    found = {key.rsplit("/", 1)[-1]: key for key in keys}
    bare = {d for d in found if d not in rows or not DIGEST.fullmatch(d)}
    now = utcnow()
    cutoff = now - timedelta(seconds=grace_seconds)
    mine = SnapshotOrphanSuspect.project_id == project_id
    async with factory() as db:
        known = dict(
            (
                await db.execute(
                    select(SnapshotOrphanSuspect.sha256, SnapshotOrphanSuspect.deleted_at).where(
                        mine
                    )
                )
            ).all()
        )
        new = sorted(d for d in bare if d not in known or known[d] is not None)
        for start in range(0, len(new), BATCH):
            for digest in new[start : start + BATCH]:
                await db.execute(
                    delete(SnapshotOrphanSuspect).where(
                        mine, SnapshotOrphanSuspect.sha256 == digest
                    )
                )
                db.add(SnapshotOrphanSuspect(project_id=project_id, sha256=digest, seen_at=now))
        # No longer suspects: a row came, or the object went; tombstones past the grace.
        stale = sorted(
            d for d, gone in known.items() if d not in bare and (gone is None or gone < cutoff)
        )
        for start in range(0, len(stale), BATCH):
            await db.execute(
                delete(SnapshotOrphanSuspect).where(
                    mine, SnapshotOrphanSuspect.sha256.in_(stale[start : start + BATCH])
                )
            )
        try:
            await db.commit()
        except IntegrityError:  # another replica's pass recorded them meanwhile
            await db.rollback()
    deleted = 0
    for digest in sorted(d for d in bare if d in known and known[d] is None):
        async with factory() as db:
            claimed = await db.execute(
                update(SnapshotOrphanSuspect)
                .where(
                    mine,
                    SnapshotOrphanSuspect.sha256 == digest,
                    SnapshotOrphanSuspect.seen_at <= cutoff,
                    SnapshotOrphanSuspect.deleted_at.is_(None),
                )
                .values(deleted_at=utcnow())
            )
            if not getattr(claimed, "rowcount", 0):  # not due, cleared, or another's
                await db.rollback()
                continue
            stored = await db.scalar(
                select(SnapshotChunk.sha256).where(
                    SnapshotChunk.project_id == project_id, SnapshotChunk.sha256 == digest
                )
            )
            if stored is not None:  # its row came meanwhile
                await db.rollback()
                continue
            await storage.delete(found[digest])
            await db.commit()
        deleted += 1
    if deleted:
        log.info("project %s: deleted %d orphan snapshot chunk(s)", project_id, deleted)
    return deleted

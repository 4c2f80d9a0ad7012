"""Retention of run states, and the sweep of the chunks nothing names (issue 43).

After a run keeps its state, its project is brought back within its bounds: each session
keeps its newest `SNAPSHOT_KEEP_PER_SESSION` states, and the project's states take at most
`SNAPSHOT_PROJECT_MAX_MB` of unique chunks; beyond, the oldest states go first, never a
session's newest, and never what a session's `snapshot` names (a branch given an old state
keeps its chunks). A dropped state is simply gone: `state_at` says None and a branch made
after that run is rebuilt by replay.

Then the chunks no state and no session names are deleted — only those nobody named for
`grace` seconds, each checked again as its row is deleted (row locked until its object is
deleted and the deletion committed). Whoever names a chunk marks it used in the same
transaction (`snapshot_chunks.touch`): it is then either seen as used here, or, if the
sweep came first, found gone by the writer, which stores it again. No window loses a
chunk a record keeps.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select

from app.infra.storage import ObjectStorage
from app.models import RunState, Session, SnapshotChunk
from app.models.base import utcnow
from app.runs.snapshot_chunks import BATCH, Factory, digests_of, key

log = logging.getLogger(__name__)

GRACE_SECONDS = 600


@dataclass(frozen=True)
class Swept:
    """What one pass did."""

    dropped_states: int = 0
    deleted_chunks: int = 0
    freed_bytes: int = 0


async def enforce(
    factory: Factory,
    storage: ObjectStorage,
    project_id: uuid.UUID,
    keep_per_session: int,
    max_bytes: int,
    grace_seconds: float = GRACE_SECONDS,
) -> Swept:
    """Drop the states beyond the bounds, then delete the chunks nothing names.

    Args:
        keep_per_session: States a session keeps (at least its newest).
        max_bytes: Unique chunk bytes the project's states may take (0: no bound).
        grace_seconds: How long a chunk nothing names is left (a record may be about to).
    """
    dropped = await drop_states(factory, project_id, keep_per_session, max_bytes)
    deleted, freed = await sweep(factory, storage, project_id, grace_seconds)
    if dropped or deleted:
        log.info(
            "project %s: dropped %d run state(s), deleted %d chunk(s) (%d bytes)",
            project_id,
            dropped,
            deleted,
            freed,
        )
    return Swept(dropped, deleted, freed)


async def drop_states(
    factory: Factory, project_id: uuid.UUID, keep_per_session: int, max_bytes: int
) -> int:
    """Delete the run states beyond the bounds (oldest first, never a session's newest)."""
    async with factory() as db:
        rows = (
            await db.execute(
                select(RunState.run_id, RunState.session_id, RunState.record)
                .where(RunState.project_id == project_id)
                .order_by(RunState.created_at, RunState.run_id)
            )
        ).all()
        pinned = await _session_snapshots(db, project_id)
        sizes = {digest: int(size) for digest, size in await db.execute(_sizes(project_id))}
    by_session: dict[uuid.UUID, list[uuid.UUID]] = {}
    for run_id, session_id, _ in rows:
        by_session.setdefault(session_id, []).append(run_id)
    newest = {runs[-1] for runs in by_session.values()}
    keep = max(1, keep_per_session)
    dropped = {run_id for runs in by_session.values() for run_id in runs[:-keep]}
    if max_bytes:
        references: Counter[str] = Counter()
        for run_id, _, record in rows:
            if run_id not in dropped:
                references.update(digests_of(record))
        for record in pinned:
            references.update(digests_of(record))
        used = sum(sizes.get(digest, 0) for digest in references)
        for run_id, _, record in rows:
            if used <= max_bytes:
                break
            if run_id in dropped or run_id in newest:
                continue
            dropped.add(run_id)
            for digest in digests_of(record):
                references[digest] -= 1
                if references[digest] == 0:
                    used -= sizes.get(digest, 0)
    if not dropped:
        return 0
    ordered = sorted(dropped)
    async with factory() as db:
        for start in range(0, len(ordered), BATCH):
            batch = ordered[start : start + BATCH]
            await db.execute(delete(RunState).where(RunState.run_id.in_(batch)))
        await db.commit()
    return len(dropped)


async def sweep(
    factory: Factory, storage: ObjectStorage, project_id: uuid.UUID, grace_seconds: float
) -> tuple[int, int]:
    """Delete the project's chunks that no state and no session names; (count, bytes)."""
    cutoff = utcnow() - timedelta(seconds=grace_seconds)
    async with factory() as db:
        named: set[str] = set()
        records = await db.scalars(select(RunState.record).where(RunState.project_id == project_id))
        for record in records:
            named |= digests_of(record)
        for record in await _session_snapshots(db, project_id):
            named |= digests_of(record)
        result = await db.execute(
            select(SnapshotChunk.sha256, SnapshotChunk.size).where(
                SnapshotChunk.project_id == project_id, SnapshotChunk.used_at < cutoff
            )
        )
        idle = [(str(digest), int(size)) for digest, size in result]
    deleted = freed = 0
    for digest, size in idle:
        if digest in named:
            continue
        async with factory() as db:
            gone = await db.execute(
                delete(SnapshotChunk).where(
                    SnapshotChunk.project_id == project_id,
                    SnapshotChunk.sha256 == digest,
                    SnapshotChunk.used_at < cutoff,  # not named meanwhile
                )
            )
            if not getattr(gone, "rowcount", 0):
                continue
            # The object goes while the row is locked: a writer naming the chunk now waits,
            # then finds it gone and stores it again.
            await storage.delete(key(project_id, digest))
            await db.commit()
        deleted, freed = deleted + 1, freed + int(size)
    return deleted, freed


async def _session_snapshots(db: Any, project_id: uuid.UUID) -> list[dict[str, Any]]:
    query = select(Session.snapshot).where(
        Session.project_id == project_id, Session.snapshot.is_not(None)
    )
    return [record for record in await db.scalars(query) if isinstance(record, dict)]


def _sizes(project_id: uuid.UUID) -> Any:
    return select(SnapshotChunk.sha256, SnapshotChunk.size).where(
        SnapshotChunk.project_id == project_id
    )

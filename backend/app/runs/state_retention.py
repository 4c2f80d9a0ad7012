"""Retention of run states, and the sweep of the chunks nothing names (issue 43).

At a run's end (`at_run_end`), only that run's session is brought back within its bound:
it keeps its newest `SNAPSHOT_KEEP_PER_SESSION` states. The project's bound
(`SNAPSHOT_PROJECT_MAX_MB` of unique chunks) is checked before the state is kept
(`make_room`): one sum of the project's stored chunk bytes when it is under it, and only
over it the project's states are read: the oldest go first, never a session's newest, and
never what a session's `snapshot` names (a branch given an old state keeps its chunks). When
that is not enough, the save is refused (`OverBound`) with a sentence naming the largest
sessions to delete; that finding is kept (app.runs.bound_floor), so while nothing that could
lower it changed, the next saves are refused without reading the project's states again.
A dropped state is simply gone: `state_at` says None and a branch made
after that run is rebuilt by replay.

The chunks no state and no session names are deleted by the periodic sweep
(`app.runs.chunk_sweep`, through `enforce`), never at a run's end — only those nobody named
for `grace` seconds, each checked again as its row is deleted (row locked until its object
is deleted and the deletion committed). Whoever names a chunk marks it used in the same
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

from sqlalchemy import delete, func, select, update

from app.agent.prompting import human_size
from app.infra.storage import ObjectStorage
from app.models import Project, RunState, Session, SnapshotChunk
from app.models.base import utcnow
from app.runs import bound_floor
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
    """Drop the states beyond the bounds, then delete the chunks nothing names (a pass of
    the periodic sweep over one project: it reads every state of the project).

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


class OverBound(Exception):
    """The project's states would pass its bound with only each session's newest left."""


async def at_run_end(factory: Factory, session_id: uuid.UUID, keep_per_session: int) -> int:
    """Drop the session's states beyond its newest `keep_per_session`; how many went.

    Reads only the session's own states (at most the bound and the one just kept).
    """
    async with factory() as db:
        runs = list(
            await db.scalars(
                select(RunState.run_id)
                .where(RunState.session_id == session_id)
                .order_by(RunState.created_at.desc(), RunState.run_id.desc())
            )
        )
        dropped = runs[max(1, keep_per_session) :]
        for start in range(0, len(dropped), BATCH):
            batch = dropped[start : start + BATCH]
            await db.execute(delete(RunState).where(RunState.run_id.in_(batch)))
        await db.commit()
    return len(dropped)


async def make_room(
    factory: Factory,
    project_id: uuid.UUID,
    session_id: uuid.UUID,
    record: dict[str, Any],
    keep_per_session: int,
    max_bytes: int,
    new_bytes: int = 0,
) -> None:
    """Before `record` is kept as the session's newest state: keep the project within
    `max_bytes` (0: no bound), dropping its oldest droppable states. `new_bytes`: what
    storing the record added (chunks the project did not have).

    While an earlier refusal still holds (app.runs.bound_floor), the save is refused again
    without reading the project's states.

    Raises:
        OverBound: Even with only each session's newest (the new record for this session)
            the project would pass its bound; nothing was dropped. Its sentence names
            the largest sessions to delete.
    """
    if not max_bytes:
        return
    async with factory() as db:
        stored = await db.scalar(
            select(func.coalesce(func.sum(SnapshotChunk.size), 0)).where(
                SnapshotChunk.project_id == project_id
            )
        )
    if int(stored or 0) <= max_bytes:  # the chunks stored, named or not, fit: nothing to do
        return
    known = await bound_floor.still_over(factory, project_id, session_id, new_bytes, max_bytes)
    if known is not None:
        least, largest = known
        largest[session_id] = max(largest.get(session_id, 0), int(record.get("bytes") or 0))
        raise OverBound(await _refusal(factory, least, largest, max_bytes, at_least=True))
    async with factory() as db:
        seen = await bound_floor.mark(db, project_id)  # before the states are read
    plan = await _plan(factory, project_id, keep_per_session, max_bytes, (session_id, record))
    if plan.used > max_bytes:
        await bound_floor.keep(factory, project_id, seen, plan.floor, plan.sizes)
        raise OverBound(await _refusal(factory, plan.used, plan.sizes, max_bytes))
    await _drop(factory, plan.dropped)


async def refused(factory: Factory, project_id: uuid.UUID, why: str | None) -> None:
    """Keep (or clear, with None) why the project's last state save was refused."""
    async with factory() as db:
        query = update(Project).where(Project.id == project_id)
        if why is None:  # one statement that changes nothing when there was no refusal
            query = query.where(Project.snapshot_refusal.is_not(None))
        await db.execute(query.values(snapshot_refusal=why))
        await db.commit()


async def drop_states(
    factory: Factory, project_id: uuid.UUID, keep_per_session: int, max_bytes: int
) -> int:
    """Delete the run states beyond the bounds (oldest first, never a session's newest)."""
    plan = await _plan(factory, project_id, keep_per_session, max_bytes, None)
    await _drop(factory, plan.dropped)
    return len(plan.dropped)


@dataclass
class _Plan:
    dropped: set[uuid.UUID]
    used: int  # unique chunk bytes of what is left
    sizes: dict[uuid.UUID, int]  # each session's newest state's bytes (its snapshot's)
    floor: int = 0  # unique chunk bytes of every session's newest and snapshot (as they are)


async def _plan(
    factory: Factory,
    project_id: uuid.UUID,
    keep_per_session: int,
    max_bytes: int,
    incoming: tuple[uuid.UUID, dict[str, Any]] | None,
) -> _Plan:
    """Which states to drop (see module); `incoming`: a session's new newest record."""
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
    records: dict[uuid.UUID, dict[str, Any]] = {}
    for run_id, session_id, record in rows:
        by_session.setdefault(session_id, []).append(run_id)
        records[run_id] = record
    floor = bound_floor.floor_of(
        [records[runs[-1]] for runs in by_session.values()], [r for _, r in pinned], sizes
    )
    if incoming is not None:  # its snapshot is about to be the record coming
        pinned = [(sid, record) for sid, record in pinned if sid != incoming[0]]
    coming = incoming[0] if incoming is not None else None
    newest = {runs[-1] for session_id, runs in by_session.items() if session_id != coming}
    keep = max(1, keep_per_session)
    dropped: set[uuid.UUID] = set()
    for session_id, runs in by_session.items():
        kept = keep - 1 if session_id == coming else keep  # the one coming is kept too
        dropped.update(runs[: max(0, len(runs) - kept)])
    references: Counter[str] = Counter()
    for run_id, _, record in rows:
        if run_id not in dropped:
            references.update(digests_of(record))
    for _, record in pinned:
        references.update(digests_of(record))
    if incoming is not None:
        references.update(digests_of(incoming[1]))
    used = sum(sizes.get(digest, 0) for digest in references)
    if max_bytes:
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
    latest = {sid: int(records[runs[-1]].get("bytes") or 0) for sid, runs in by_session.items()}
    for session_id, record in pinned:
        latest[session_id] = max(latest.get(session_id, 0), int(record.get("bytes") or 0))
    if incoming is not None:
        latest[incoming[0]] = int(incoming[1].get("bytes") or 0)
    return _Plan(dropped, used, latest, floor)


async def _drop(factory: Factory, dropped: set[uuid.UUID]) -> None:
    if not dropped:
        return
    ordered = sorted(dropped)
    async with factory() as db:
        for start in range(0, len(ordered), BATCH):
            batch = ordered[start : start + BATCH]
            await db.execute(delete(RunState).where(RunState.run_id.in_(batch)))
        await db.commit()


async def _refusal(
    factory: Factory,
    used: int,
    sizes: dict[uuid.UUID, int],
    max_bytes: int,
    at_least: bool = False,
) -> str:
    """The sentence of a refused save: the bound, and the largest sessions to delete."""
    largest = sorted(sizes.items(), key=lambda item: (-item[1], str(item[0])))[:3]
    async with factory() as db:
        titles = dict(
            (
                await db.execute(
                    select(Session.id, Session.title).where(
                        Session.id.in_([sid for sid, _ in largest])
                    )
                )
            ).all()
        )
    named = ", ".join(
        f"“{titles.get(sid, 'a deleted session')}” ({human_size(size)})" for sid, size in largest
    )
    return (
        f"The variables after this question were not saved: the project's saved states "
        f"would take {'at least ' if at_least else ''}{human_size(used)}, over its "
        f"{human_size(max_bytes)} bound "
        "(SNAPSHOT_PROJECT_MAX_MB), with only each session's latest state left. "
        f"Delete sessions you no longer need to make room; the largest: {named}."
    )


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
        for _, record in await _session_snapshots(db, project_id):
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


async def _session_snapshots(
    db: Any, project_id: uuid.UUID
) -> list[tuple[uuid.UUID, dict[str, Any]]]:
    query = select(Session.id, Session.snapshot).where(
        Session.project_id == project_id, Session.snapshot.is_not(None)
    )
    return [(sid, record) for sid, record in await db.execute(query) if isinstance(record, dict)]


def _sizes(project_id: uuid.UUID) -> Any:
    return select(SnapshotChunk.sha256, SnapshotChunk.size).where(
        SnapshotChunk.project_id == project_id
    )

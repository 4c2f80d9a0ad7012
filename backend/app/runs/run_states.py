"""The state at every question (issue 43): the snapshot record each run left, kept per run.

At the end of every run that snapshots, its record (the same shape as `Session.snapshot`,
what `snapshots.download` takes) is kept as the run's state, in the same transaction that
makes it the session's snapshot; a run after which nothing changed keeps the record the
session already had. `state_at` gives a run's state back (to make a branch: the branch's
`snapshot` is set to it, so one record may be named by several sessions at once — its
chunks are deleted only once nothing names them, see `app.runs.state_retention`).

Both sides mark the chunks they name as used, in their transaction: the sweep deletes a
chunk only if nothing named it lately, checked again with the row locked, so a record
being kept or handed to a branch never loses a chunk to a sweep running meanwhile.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Run, RunState, Session
from app.models.base import utcnow
from app.runs.snapshot_chunks import Factory, digests_of, is_chunked, touch


async def state_at(db: AsyncSession, session: Session, run: Run) -> dict[str, Any] | None:
    """The snapshot record of the session's variables at the end of `run`, or None.

    `run` may be of the session or of its inherited past (states are kept by run). None
    when the run left no state (it failed before its end was saved, snapshots are off),
    retention dropped it, a chunk it names is gone, or it is of another project. The
    record's chunks are marked used in `db`'s transaction: commit it soon after giving the
    record to a session, and the sweep cannot take them meanwhile.
    """
    state = await db.get(RunState, run.id)
    if state is None or state.project_id != session.project_id or not is_chunked(state.record):
        return None
    if await touch(db, state.project_id, digests_of(state.record)):
        return None  # a chunk is gone: the caller replays instead
    return dict(state.record)


class ChunksGone(Exception):
    """Chunks a record names were deleted meanwhile (store them again, then keep it)."""

    def __init__(self, digests: set[str]) -> None:
        super().__init__(f"{len(digests)} chunk(s) gone")
        self.digests = digests


async def keep(
    factory: Factory,
    run_id: uuid.UUID,
    session_id: uuid.UUID,
    project_id: uuid.UUID,
    record: dict[str, Any],
    new_bytes: int,
) -> bool:
    """Keep `record` as the run's state and the session's snapshot, in one transaction.

    Returns:
        Whether the session still exists (False: nothing was kept).

    Raises:
        ChunksGone: A chunk the record names was swept meanwhile (nothing was kept).
    """
    async with factory() as db:
        gone = await touch(db, project_id, digests_of(record))
        if gone:
            await db.rollback()
            raise ChunksGone(gone)
        changed = await db.execute(
            update(Session)
            .where(Session.id == session_id)
            .values(snapshot=record, updated_at=utcnow())
        )
        if not getattr(changed, "rowcount", 0):
            await db.rollback()
            return False
        if await db.scalar(select(Run.id).where(Run.id == run_id)) is None:
            await db.commit()  # the run went (its session is being deleted): the snapshot stays
            return True
        existing = await db.get(RunState, run_id)
        if existing is not None:  # a run that went on after the user's reply: its latest end
            await db.delete(existing)
            await db.flush()
        db.add(
            RunState(
                run_id=run_id,
                session_id=session_id,
                project_id=project_id,
                record=record,
                bytes=int(record.get("bytes") or 0),
                new_bytes=new_bytes,
                created_at=utcnow(),
            )
        )
        await db.commit()
    return True


async def project_of(factory: Factory, session_id: uuid.UUID) -> uuid.UUID | None:
    async with factory() as db:
        found = await db.scalar(select(Session.project_id).where(Session.id == session_id))
        return found if isinstance(found, uuid.UUID) else None

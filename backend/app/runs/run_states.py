"""The state of a session's variables at the end of one of its runs, where one is kept.

This first version needs no storage of its own: the session keeps one snapshot, of the
variables after its last run. That snapshot is `run`'s state only when `run` is the
session's newest run (no later run has started, so none can have saved over it since), it
has ended, and the snapshot was saved after it started (a run saves its variables as its
work ends, just before its end is recorded). Otherwise None: the caller rebuilds the
state another way (app.branches.replay).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Run, Session
from app.runs.state import ACTIVE


async def state_at(db: AsyncSession, session: Session, run: Run) -> dict[str, Any] | None:
    """The snapshot record (as `Session.snapshot`, for app.runs.snapshots.download) of the
    session's variables at the end of `run`, or None when none is kept.

    Args:
        db: A database session.
        session: The session `run` belongs to.
        run: A run of that session.
    """
    record = session.snapshot
    if not record or run.session_id != session.id or run.status in ACTIVE:
        return None
    if run.started_at is None:  # it never ran (cancelled while queued)
        return None
    newest = await db.scalar(
        select(Run.id)
        .where(Run.session_id == session.id)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(1)
    )
    if newest != run.id:
        return None
    try:
        saved = datetime.fromisoformat(str(record.get("saved_at")))
    except ValueError:
        return None
    if saved.tzinfo is None:
        saved = saved.replace(tzinfo=UTC)
    began = run.started_at if run.started_at.tzinfo else run.started_at.replace(tzinfo=UTC)
    return record if saved >= began else None

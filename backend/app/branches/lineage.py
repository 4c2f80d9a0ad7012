"""A branch's past: which runs of which sessions a session's history is made of.

A branch continues after a run (`branched_after_run_id`), which belongs to its parent or,
when it branched after an inherited run, to one of the parent's own ancestors. Its history
is that run's session's history up to and including the run, then its own runs. So the
whole past is a chain of *segments*, one per session, each cut at a run: found one
statement per level (the run branched after, its session and where that one branched),
never one per run, and bounded by `MAX_DEPTH`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Run, Session

# How deep branches of branches may go (the chain is walked one statement per level).
MAX_DEPTH = 50


@dataclass(frozen=True)
class Segment:
    """A session's runs up to and including `until` (a run of that session), by creation."""

    session_id: uuid.UUID
    until: uuid.UUID
    until_at: datetime


async def segments(db: AsyncSession, session: Session) -> list[Segment]:
    """The inherited part of `session`'s history, oldest segment first (empty for a root)."""
    found: list[Segment] = []
    after = session.branched_after_run_id
    while after is not None and len(found) < MAX_DEPTH:
        row = (
            await db.execute(
                select(Run.session_id, Run.created_at, Session.branched_after_run_id)
                .join(Session, Session.id == Run.session_id)
                .where(Run.id == after)
            )
        ).first()
        if row is None:  # the run is gone (its session was deleted): the past ends here
            break
        found.append(Segment(row.session_id, after, row.created_at))
        after = row.branched_after_run_id
    found.reverse()
    return found


def _within(segment: Segment) -> ColumnElement[bool]:
    return and_(
        Run.session_id == segment.session_id,
        or_(
            Run.created_at < segment.until_at,
            and_(Run.created_at == segment.until_at, Run.id <= segment.until),
        ),
    )


def inherited_clause(chain: list[Segment]) -> ColumnElement[bool] | None:
    """A WHERE clause for the runs of `chain` (None when there are none)."""
    if not chain:
        return None
    return or_(*(_within(s) for s in chain))


def history_clause(session: Session, chain: list[Segment]) -> ColumnElement[bool]:
    """A WHERE clause for the session's whole history: its inherited runs and its own."""
    own = Run.session_id == session.id
    inherited = inherited_clause(chain)
    return own if inherited is None else or_(inherited, own)


async def history_ids(db: AsyncSession, session: Session) -> list[uuid.UUID]:
    """The ids of the session's history (inherited runs first), in order."""
    chain = await segments(db, session)
    rows = await db.scalars(
        select(Run.id).where(history_clause(session, chain)).order_by(Run.created_at, Run.id)
    )
    return list(rows)

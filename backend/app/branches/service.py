"""Branches (issue 43): a new session that continues after a run of another session's
history, with the variables as they were when that run ended.

The branch row knows its parent and the run it continues after; its past is read through
app.branches.lineage. Its state is settled here where the state at that run's end is kept
(app.runs.run_states: content-addressed chunks, named by the branch's snapshot as by the
run's, so nothing is copied), else by the branch's first run (app.branches.restore replays
the past).
"""

from __future__ import annotations

import uuid

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.branches import lineage, pins
from app.errors import Conflict, NotFound
from app.models import Run, Session
from app.runs import run_states
from app.runs.state import ACTIVE

TITLE_CHARS = 200


async def history_run(db: AsyncSession, session: Session, run_id: uuid.UUID) -> Run:
    """A run of the session's history (its own, or one it inherited).

    Raises:
        NotFound: run_not_in_session: no such run in the session's history.
    """
    chain = await lineage.segments(db, session)
    run = await db.scalar(
        select(Run).where(Run.id == run_id, lineage.history_clause(session, chain))
    )
    if run is None:
        raise NotFound(
            "That run is not in this session's history (its own questions and those it inherited).",
            code="run_not_in_session",
        )
    return run


async def position(db: AsyncSession, session: Session, run: Run) -> int:
    """The run's number in the session's history (1 for the first question)."""
    chain = await lineage.segments(db, session)
    earlier = or_(
        Run.created_at < run.created_at, and_(Run.created_at == run.created_at, Run.id <= run.id)
    )
    count = await db.scalar(
        select(func.count(Run.id)).where(lineage.history_clause(session, chain), earlier)
    )
    return int(count or 0)


async def create(db: AsyncSession, parent: Session, after_run_id: uuid.UUID) -> tuple[Session, Run]:
    """Make a branch of `parent` after one of its history's runs; the branch, and the run.

    Raises:
        NotFound: run_not_in_session.
        Conflict: run_not_finished: the run is still queued, running or waiting.
    """
    run = await history_run(db, parent, after_run_id)
    if run.status in ACTIVE:
        raise Conflict(
            f"That question has not finished yet ({run.status}): a branch can start only "
            "after a finished one.",
            code="run_not_finished",
        )
    number = await position(db, parent, run)
    earlier = await db.scalar(
        select(func.count(Session.id)).where(
            Session.parent_session_id == parent.id, Session.branched_after_run_id == run.id
        )
    )
    # A second branch after the same question is told apart: "… — branch 2 after Q3".
    nth = f" {int(earlier) + 1}" if earlier else ""
    suffix = f" — branch{nth} after Q{number}"
    title = parent.title[: TITLE_CHARS - len(suffix)] + suffix
    branch = Session(
        id=uuid.uuid4(),
        project_id=parent.project_id,
        title=title,
        autonomy=parent.autonomy,
        parent_session_id=parent.id,
        branched_after_run_id=run.id,
    )
    owner = parent if run.session_id == parent.id else await db.get(Session, run.session_id)
    if owner is not None:
        # The kept state, by reference: its chunks are marked used in this transaction, so
        # no sweep takes them before the branch is committed. None: the first run replays.
        branch.snapshot = await run_states.state_at(db, owner, run)
    db.add(branch)
    await db.flush()
    # Its files are the versions its past read (app.branches.pins).
    await pins.pin_past(db, branch, owner)
    await db.refresh(branch)
    return branch, run


async def children_count(db: AsyncSession, session_id: uuid.UUID) -> int:
    count = await db.scalar(
        select(func.count(Session.id)).where(Session.parent_session_id == session_id)
    )
    return int(count or 0)

"""The statements of a run's end: its outcome stored, its wait for the user stored, and the
runs no replica runs (a wait that expired, a run whose process died) ended with the
run.finished their streams end with; each run's end in the audit log. RunRepository
(lifecycle.py) has them.

Each method is one unit of work with a database session of its own (from the factory the
repository was made with).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Update, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import raiseload

from app import audit
from app.audit import Action
from app.infra.events import RunEvent
from app.knowledge import usage as knowledge_usage
from app.knowledge.prompt import Given
from app.models import Run, RunEventRow, RunStatus, Session, User
from app.models.base import utcnow
from app.runs.events import record, run_finished
from app.runs.state import RUNNING, WAITING

# A run's own row. The model loads its steps and artifacts with it (the API shows them);
# the runner never reads those, and would load them again on every unit of work.
ROW_ONLY = (raiseload(Run.steps), raiseload(Run.artifacts), raiseload(Run.reads))

# The highest seq of a run's live log (events not yet flushed to the database).
LoggedSeq = Callable[[uuid.UUID], Awaitable[int]]


def update_run(run_id: uuid.UUID) -> Update:
    """An UPDATE of one run's row, from a unit of work that holds no Run object: the ORM
    need not look for loaded rows to bring up to date (it did, at every step of every run)."""
    return update(Run).where(Run.id == run_id).execution_options(synchronize_session=False)


class RunEndings:
    """How runs end (see module)."""

    factory: async_sessionmaker[AsyncSession]

    # A run's end -----------------------------------------------------------------------
    async def save_outcome(
        self,
        run_id: uuid.UUID,
        status: RunStatus,
        error: str | None,
        final_answer: str | None,
        totals: dict[str, Any],
        knowledge: list[Given] | None = None,
    ) -> None:
        """Store how the run ended; with the team's items it was given, which it used."""
        async with self.factory() as db:
            if knowledge:
                await knowledge_usage.mark_used(db, run_id, knowledge, final_answer)
            await db.execute(
                update_run(run_id).values(
                    status=status,
                    error=error,
                    final_answer=final_answer,
                    finished_at=utcnow(),
                    **totals,
                )
            )
            await _audit_end(db, run_id)
            await db.commit()

    async def suspend(
        self,
        run_id: uuid.UUID,
        status: RunStatus,
        pending: dict[str, Any],
        memory: list[dict[str, Any]],
        totals: dict[str, Any],
    ) -> None:
        """Store that the run waits for the user: for what, and the agent's memory."""
        async with self.factory() as db:
            row = await db.get(Run, run_id, options=ROW_ONLY)
            if row is None:
                raise LookupError(f"run {run_id} was deleted")
            row.status = status
            row.pending = pending
            row.agent_memory = memory
            row.waiting_since = utcnow()
            for column, value in totals.items():
                setattr(row, column, value)
            await db.commit()

    # Runs that no replica runs -----------------------------------------------------------
    async def waiting_runs(self, session_ids: Iterable[uuid.UUID]) -> list[uuid.UUID]:
        async with self.factory() as db:
            return list(
                await db.scalars(
                    select(Run.id).where(
                        Run.session_id.in_(list(session_ids)), Run.status.in_(WAITING)
                    )
                )
            )

    async def expired_waits(self, cutoff: datetime) -> list[uuid.UUID]:
        """The runs that have waited for the user since before `cutoff`."""
        async with self.factory() as db:
            return list(
                await db.scalars(
                    select(Run.id).where(Run.status.in_(WAITING), Run.waiting_since < cutoff)
                )
            )

    async def running(self) -> list[tuple[uuid.UUID, uuid.UUID]]:
        """(run, session) of every run some replica should be running."""
        async with self.factory() as db:
            return [
                (run_id, session_id)
                for run_id, session_id in (
                    await db.execute(select(Run.id, Run.session_id).where(Run.status.in_(RUNNING)))
                ).all()
            ]

    async def end_waiting(
        self,
        run_id: uuid.UUID,
        status: RunStatus,
        error: str,
        logged: LoggedSeq,
        since_before: datetime | None = None,
    ) -> RunEvent | None:
        """End a run that waits for the user (since before `since_before`, if given), unless
        an answer took it first; its run.finished (stored; the caller publishes it), or None."""
        async with self.factory() as db:
            waiting = update(Run).where(Run.id == run_id, Run.status.in_(WAITING))
            if since_before is not None:
                waiting = waiting.where(Run.waiting_since < since_before)
            # Taken in one statement: an answer arriving now finds it no longer waiting.
            taken = await db.execute(waiting.values(status=status))
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                return None
            run = await db.get(Run, run_id, options=ROW_ONLY, populate_existing=True)
            assert run is not None
            event = await self._finish(db, run, status, error, logged)
            await db.commit()
        return event

    async def fail_orphans(
        self,
        run_ids: list[uuid.UUID],
        error: str,
        orphaned: Callable[[Run], Awaitable[bool]],
        logged: LoggedSeq,
    ) -> list[tuple[Run, RunEvent]]:
        """Fail those of the runs that are still running and still `orphaned`; each with
        the run.finished to publish."""
        ended: list[tuple[Run, RunEvent]] = []
        async with self.factory() as db:
            runs = await db.scalars(select(Run).where(Run.id.in_(run_ids), Run.status.in_(RUNNING)))
            for run in list(runs):
                if await orphaned(run):
                    ended.append(
                        (run, await self._finish(db, run, RunStatus.failed, error, logged))
                    )
            await db.commit()
        return ended

    async def _finish(
        self, db: AsyncSession, run: Run, status: RunStatus, error: str | None, logged: LoggedSeq
    ) -> RunEvent:
        """End a run that no replica runs (its process died, or it waits for the user): its
        row, and the run.finished its streams end with (stored with it)."""
        run.status, run.error, run.finished_at = status, error, utcnow()
        run.pending, run.agent_memory, run.waiting_since = None, None, None
        last = await db.scalar(
            select(func.max(RunEventRow.seq)).where(RunEventRow.run_id == run.id)
        )
        seq = max(last or 0, await logged(run.id)) + 1
        finished = record(
            run.id,
            seq,
            run_finished(status, error, run.tokens_in, run.tokens_out, run.cost_usd, None),
        )
        db.add(RunEventRow(run_id=run.id, seq=seq, event=finished.event, data=finished.data))
        await _audit_end(db, run.id)
        return finished


async def _audit_end(db: AsyncSession, run_id: uuid.UUID) -> None:
    """Log that a run ended, with what it spent, as its asker's (none if it was deleted)."""
    found = (
        await db.execute(
            select(
                Session.project_id,
                Run.user_id,
                Run.status,
                Run.tokens_in,
                Run.tokens_out,
                Run.cost_usd,
                User.email,
            )
            .join(Session, Session.id == Run.session_id)
            .outerjoin(User, User.id == Run.user_id)
            .where(Run.id == run_id)
        )
    ).one_or_none()
    if found is None:
        return
    project_id, asker, status, tokens_in, tokens_out, cost, email = found
    ended = {
        "run_id": str(run_id),
        "status": str(status),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "cost_usd": cost,
    }
    actor = None if asker is None else (asker, email)
    await audit.record(db, project_id, actor, Action.run_ended, ("run", run_id), ended)

"""Running a job's code in its own session's sandbox worker: as a run of kind `cell` (the
session's lock, the line for sandbox slots, the question's limits on time, memory, disk and
output, artifacts captured; no model), waited for by following the run's events, no
database connection held meanwhile."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import AppError, ServiceUnavailable
from app.models import Run, RunKind, RunStatus, Session
from app.runs.errors import AnalysisDisabled, SessionBusy
from app.runs.orchestrator import RunOrchestrator

FINISHED = (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)
NOT_NOW = (SessionBusy, AnalysisDisabled, ServiceUnavailable)
RETRIES = 12
FIRST_WAIT, LONGEST_WAIT = 0.25, 30.0
FOLLOW_AGAIN_SECONDS = 0.5


class NotRun(Exception):
    """The code could not be run (the sentence says why)."""


@dataclass
class Executed:
    run_id: uuid.UUID
    status: str
    output: str
    error: str | None

    @property
    def failure(self) -> str:
        """The code's error as one sentence (its last line)."""
        lines = [line for line in (self.error or "").strip().splitlines() if line.strip()]
        return f"The job's code failed: {lines[-1].strip()}" if lines else "The job's code failed."


async def execute(
    runs: RunOrchestrator,
    factory: async_sessionmaker[AsyncSession],
    session_id: uuid.UUID,
    code: str,
    asker: tuple[uuid.UUID, str],
    user_id: uuid.UUID | None,
    started: asyncio.Future[uuid.UUID] | None = None,
) -> Executed:
    """Run `code` in the session's worker and wait for it to end.

    Args:
        asker: Who the run is recorded for (id and email: the audit log's actor).
        user_id: The run's user (None: nobody, e.g. its maker was removed).
        started: Given the run's id once it is recorded.

    Raises:
        NotRun: The session is gone, or the server stayed busy.
    """
    run_id: uuid.UUID | None = None
    for tries in range(1, RETRIES + 1):
        async with factory() as db:
            session = await db.get(Session, session_id)
        if session is None:
            raise NotRun("The job's session was deleted, so its code cannot run.")
        row = Run(
            session_id=session.id,
            kind=RunKind.cell,
            user_id=user_id,
            query=code,
            model="",
            cell={"language": "python", "job": True},
            file_ids=[],
        )
        try:
            run = await runs.run_cell(session, row, asker)
            run_id = run.id
            break
        except NOT_NOW as exc:
            if tries == RETRIES:
                raise NotRun(
                    f"The job could not run, the server stayed busy: {exc.detail}"
                ) from None
            await asyncio.sleep(min(FIRST_WAIT * 2 ** (tries - 1), LONGEST_WAIT))
        except AppError as exc:
            raise NotRun(exc.detail) from None
    assert run_id is not None
    if started is not None and not started.done():
        started.set_result(run_id)
    return await wait(runs, factory, run_id)


async def wait(
    runs: RunOrchestrator, factory: async_sessionmaker[AsyncSession], run_id: uuid.UUID
) -> Executed:
    seq = 0
    while True:
        async for event in runs.follow(run_id, seq):
            if event is not None:
                seq = max(seq, event.seq)
        async with factory() as db:
            run = await db.get(Run, run_id)
            if run is None:
                raise NotRun("The job's run was deleted (with its session?) before it ended.")
            if run.status in FINISHED:
                step = run.steps[0] if run.steps else None
                output = (step.output if step else None) or ""
                error = (step.error if step else None) or run.error
                return Executed(run.id, run.status, output, error)
        await asyncio.sleep(FOLLOW_AGAIN_SECONDS)

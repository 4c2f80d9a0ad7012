"""The runs' public face: ask (start), reply (answer, decide), read, cancel, and close.

A run: one question answered by the agent, from the session lock to `run.finished`. Who
does what (each a module of app.runs):
    admission    lets a question, a cell or a reply in (lock, checks, slot, the run's row)
    execution    runs it (context, the agent's thread, translator) and ends or parks it
    cells        runs a cell's code (the user's own) instead of the agent
    reader       reads its events, live or stored
    ending       ends runs no replica runs (waiting ones, those of a dead replica)
    sweeper      finds those, and cancels asked of other replicas
    repository   every statement on runs, steps, artifacts and stored events
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.attempts.fanout import AttemptsExecution
from app.config import Settings
from app.infra.events import RunEvent, RunEventLog
from app.infra.locks import SessionLocks
from app.infra.storage import ObjectStorage
from app.knowledge.review import KnowledgeReview
from app.models import Run, RunStatus, Session
from app.observability import metrics, tracing
from app.runs.admission import Admission
from app.runs.agent_thread import CANCEL_GRACE_SECONDS
from app.runs.cells import CellExecution
from app.runs.context import ContextBuilder
from app.runs.ending import RunEnding
from app.runs.events import Decision
from app.runs.execution import Admitted, RunExecution, Runtime
from app.runs.failures import STOPPED
from app.runs.reader import RunReader
from app.runs.repository import RunCreated, RunRepository
from app.runs.sandboxes import SandboxPool
from app.runs.schemas import QueryRequest
from app.runs.state import ACTIVE, LiveRun, LiveRuns, Reply
from app.runs.sweeper import Sweeper


class RunOrchestrator:
    def __init__(
        self,
        *,
        settings: Settings,
        factory: async_sessionmaker[AsyncSession],
        storage: ObjectStorage,
        locks: SessionLocks,
        events: RunEventLog,
        sandboxes: SandboxPool,
        requests_factory: async_sessionmaker[AsyncSession] | None = None,
        run_created: RunCreated | None = None,
    ):
        """Args:
        factory: Database sessions for the runs' own work (their pool).
        requests_factory: Database sessions for work done while a request waits (start,
            follow, cancel); default: `factory`.
        run_created: Told of every run recorded (its session's live stream says so).
        """
        repository = RunRepository(factory, run_created)
        self.requests = RunRepository(requests_factory or factory, run_created)
        self.runs = LiveRuns()
        self.rt = Runtime(
            settings=settings,
            storage=storage,
            locks=locks,
            events=events,
            sandboxes=sandboxes,
            repository=repository,
            context=ContextBuilder(settings, storage, repository, sandboxes),
            runs=self.runs,
            review=KnowledgeReview(settings, factory),
        )
        self.admission = Admission(self.rt, self.requests)
        self.reader = RunReader(events, self.requests)
        self.ending = RunEnding(events, repository)
        self.sweeper = Sweeper(self.rt, self.ending)

    async def start(
        self, session: Session, body: QueryRequest, asker: tuple[uuid.UUID, str]
    ) -> Run:
        """Take the session lock and a sandbox slot (or a place in the queue), record the run
        as `asker`'s (their id and email), emit run.started (or run.queued) and run it in
        the background."""
        with tracing.span("admit"):
            admitted = await self.admission.question(session, body, asker)
        metrics.RUNS_STARTED.inc()
        self._execute(admitted, AttemptsExecution if admitted.attempts > 1 else RunExecution)
        return admitted.run

    async def run_cell(self, session: Session, run: Run, asker: tuple[uuid.UUID, str]) -> Run:
        """Take the session lock and a sandbox slot (or a place in the queue) for a cell's
        run (`run`: its row, see app.runs.cells.new_cell), and run its code in the
        background: no model is called."""
        with tracing.span("admit"):
            admitted = await self.admission.cell(session, run, asker)
        metrics.RUNS_STARTED.inc()
        self._execute(admitted, CellExecution)
        return admitted.run

    async def answer(self, run_id: uuid.UUID, text: str, by: uuid.UUID | None = None) -> None:
        """Answer (as `by`) the question a waiting run asked, and go on with the run (on this
        replica, whichever started it): NotWaiting (not_waiting_input) unless it waits for
        an answer."""
        await self._reply(run_id, Reply(answer=text, by=by))

    async def decide(
        self,
        run_id: uuid.UUID,
        decision: Decision,
        code: str | None,
        feedback: str | None,
        by: uuid.UUID | None = None,
    ) -> None:
        """Approve, edit or reject (as `by`) the code a run in review mode waits with, and go
        on: NotWaiting (not_waiting_approval) unless it waits for approval."""
        await self._reply(run_id, Reply(decision=decision, code=code, feedback=feedback, by=by))

    async def _reply(self, run_id: uuid.UUID, reply: Reply) -> None:
        with tracing.span("admit", {"workbench.run.id": str(run_id)}):
            admitted = await self.admission.reply(run_id, reply)
        self._execute(admitted)

    def _execute(self, admitted: Admitted, kind: type[RunExecution] = RunExecution) -> None:
        run = admitted.run
        live = LiveRun(run.id, run.session_id)
        self.runs.live[run.id] = live
        execution = kind(self.rt, live, admitted)
        live.task = asyncio.create_task(execution.execute(), name=f"run-{run.id}")

    async def events(
        self, run_id: uuid.UUID, status: str, after: int
    ) -> tuple[list[RunEvent], AsyncIterator[RunEvent | None] | None]:
        """The run's events after `after`: stored ones of a run that ended, or its events as
        they come until run.finished (see RunReader.read)."""
        return await self.reader.read(run_id, status, after)

    def follow(self, run_id: uuid.UUID, after: int) -> AsyncIterator[RunEvent | None]:
        """The run's events after `after` as they come, until run.finished (None: a heartbeat)."""
        return self.reader.follow(run_id, after)

    def is_live(self, run_id: uuid.UUID) -> bool:
        return run_id in self.runs.live

    async def cancel(self, run_id: uuid.UUID, wait_seconds: float = 15.0) -> None:
        """Ask the run to stop (here or on whichever replica runs it) and wait for it to end."""
        live = self.runs.live.get(run_id)
        if live is None and await self.ending.end_waiting(run_id, RunStatus.cancelled, STOPPED):
            return
        if live is None:
            await self.rt.events.request_cancel(str(run_id))
            deadline = time.monotonic() + wait_seconds
            while time.monotonic() < deadline:
                status = await self.requests.status(run_id)
                if status is None or status not in ACTIVE:
                    return
                await asyncio.sleep(0.2)
            return
        live.stop.set()
        await asyncio.wait_for(live.done.wait(), wait_seconds)

    async def stop_waiting(self, session_ids: list[uuid.UUID], reason: str) -> None:
        """End the runs of these sessions that wait for the user (their streams end too)."""
        for run_id in await self.rt.repository.waiting_runs(session_ids):
            await self.ending.end_waiting(run_id, RunStatus.cancelled, reason)

    def start_sweeper(self) -> None:
        self.sweeper.start()

    async def recover_interrupted_runs(self) -> int:
        return await self.sweeper.recover_interrupted_runs()

    async def close(self) -> None:
        self.sweeper.stop()
        for pending in list(self.runs.unrecorded.values()):
            pending.cancel()
        for live in list(self.runs.live.values()):
            live.stop.set()
        tasks = [live.task for live in self.runs.live.values() if live.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=CANCEL_GRACE_SECONDS)
        await self.rt.review.close()

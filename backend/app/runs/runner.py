"""A run: one question answered by the agent, from the session lock to `run.finished`.

The agent (smolagents, synchronous) runs in a thread of its own; what it yields crosses to
the event loop through a queue, becomes events (live log + database) and rows (steps,
artifacts). The run belongs to no request: a client that disconnects stops nothing.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import logging
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError
from smolagents.agents import ActionStep, FinalAnswerStep, PlanningStep
from smolagents.memory import ToolCall
from smolagents.models import ChatMessageStreamDelta
from smolagents.utils import AgentGenerationError
from sqlalchemy import Update, func, literal, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import raiseload

from app.agent import memory as agent_memory
from app.agent import prompting
from app.agent.build import (
    MaxStepsReached,
    PlanDelta,
    call_limits,
    create_agent,
    create_model,
    resolve_model,
    step_cost,
)
from app.agent.calls import CallLimits, ModelFailed
from app.agent.checking import AnswerCheck, Verdict
from app.agent.executor import SandboxExecutor, SandboxLost
from app.config import Settings
from app.errors import BadRequest, Conflict, Forbidden, ServiceUnavailable
from app.files import service as files_service
from app.files.preview import PreviewError, preview_kind
from app.infra.events import RunEvent, RunEventLog
from app.infra.locks import SessionLocks
from app.infra.storage import ObjectStorage
from app.models import Artifact, File, Project, Run, RunEventRow, RunStatus, RunStep, Session
from app.models.base import UTCDateTime, utcnow
from app.runs import budget, snapshots
from app.runs.budget import BudgetExceeded
from app.runs.recorder import EventRecorder
from app.runs.sandboxes import SandboxPool, SlotTicket
from app.runs.schemas import ArtifactOut, QueryRequest
from app.runs.workspace import (
    manifest_path,
    materialize,
    snapshot_marker_path,
    upload,
    workspace_dir,
)
from app.sandbox import (
    BOOKKEEPING_DIR,
    DEFAULT_AUTHORIZED_IMPORTS,
    ArtifactFile,
    CodeForApproval,
    RestoreReport,
    SandboxUnavailable,
    SandboxWorker,
    SnapshotReport,
    StepResult,
    UserQuestion,
    hostfs,
)

log = logging.getLogger(__name__)

CANCEL_POLL_SECONDS = 0.25
# The model's text pieces that arrive within this long of the first go out as one
# `model.delta`: a browser shows 20 updates a second as smooth as one per token, and each
# event is a Redis write, a read per follower, an SSE frame and a database row.
DELTA_WINDOW_SECONDS = 0.05
QUEUE_POLL_SECONDS = 0.5
# A queued run tells every change of its place while it is among the next few; further
# back, at most one a few seconds (every grant moves every queued run: told each time, 200
# queued runs would send some 20,000 events).
QUEUE_NEAR_POSITION = 10
QUEUE_ANNOUNCE_SECONDS = 5.0
INTERRUPTED = "This run was interrupted: the server running it stopped. Ask again."
CANCEL_GRACE_SECONDS = 10.0
# A run's end that the database could not take is retried this often, this long.
RECORD_RETRY_INTERVAL_SECONDS = 2.0
RECORD_RETRY_SECONDS = 600.0
# While the live log (Redis) is down, streams read a run's events from the database.
STORED_POLL_SECONDS = 1.0
LOG_RETENTION_SECONDS = 3600
OUTPUT_EVENT_CHARS = 20_000
HISTORY_TURNS = 10
# A run's own row. The model loads its steps and artifacts with it (the API shows them);
# the runner never reads those, and would load them again on every unit of work.
ROW_ONLY = (raiseload(Run.steps), raiseload(Run.artifacts))
SANDBOX_RETRY_SECONDS = 30
# Runs that wait for the user: no replica runs them; they hold no lock, thread or worker.
WAITING = (RunStatus.waiting_input, RunStatus.waiting_approval)
# Runs that some replica runs (holding the session's lock).
RUNNING = (RunStatus.queued, RunStatus.running)
ACTIVE = RUNNING + WAITING
SUSPEND_FAILED = (
    "The run could not wait for your answer: the database did not take its state. Ask again."
)
INPUT_TIMED_OUT = (
    "Nobody answered the agent's question within {time}, so the run was stopped. Ask again."
)


class RunCancelled(Exception):
    pass


@dataclass
class LiveRun:
    run_id: uuid.UUID
    session_id: uuid.UUID
    stop: threading.Event = field(default_factory=threading.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


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
    ):
        """Args:
        factory: Database sessions for the runs' own work (their pool).
        requests_factory: Database sessions for work done while a request waits (start,
            follow, cancel); default: `factory`.
        """
        self.settings = settings
        self.factory = factory
        self.requests_factory = requests_factory or factory
        self.storage = storage
        self.locks = locks
        self.events = events
        self.sandboxes = sandboxes
        self.lock_ttl = settings.SESSION_LOCK_TTL_SECONDS
        self._live: dict[uuid.UUID, LiveRun] = {}
        # Ended runs whose end the database has not taken yet (it was down).
        self._unrecorded: dict[uuid.UUID, asyncio.Task[None]] = {}
        self._ending: set[uuid.UUID] = set()  # runs between their end and its record
        self._sweeper: asyncio.Task[None] | None = None
        self._cancel_watch: asyncio.Task[None] | None = None

    # Starting ---------------------------------------------------------------------
    async def start(self, session: Session, body: QueryRequest) -> Run:
        """Take the session lock and a sandbox slot (or a place in the queue), record the run,
        emit run.started (or run.queued) and run it in the background."""
        model_id = resolve_model(self.settings, body.model)
        sandbox = await self.sandboxes.status()
        if not sandbox.available:
            raise ServiceUnavailable(
                "Analysis is disabled: "
                + sandbox.detail
                + (f". Fix: {sandbox.fix}." if sandbox.fix else "."),
                code="sandbox_unavailable",
                retry_after=SANDBOX_RETRY_SECONDS,
            )
        file_ids = [str(f) for f in body.file_ids]
        token = await self.locks.acquire(str(session.id), self.lock_ttl)
        if token is None:
            raise Conflict(
                "This session is still answering another question; wait for it or stop it.",
                code="session_busy",
            )
        ticket: SlotTicket | None = None
        try:
            async with self.requests_factory() as db:
                if file_ids:
                    await self._check_files(db, session, body.file_ids)
                waiting = await db.scalar(
                    select(Run.status).where(Run.session_id == session.id, Run.status.in_(WAITING))
                )
                if waiting is not None:
                    raise Conflict(
                        "This session's question is waiting for your "
                        + ("answer" if waiting == RunStatus.waiting_input else "approval")
                        + ": answer it, or stop that run, before asking another.",
                        code="session_busy",
                    )
                project = await db.get(Project, session.project_id)
                assert project is not None
                # A project past its budget takes no more questions (403 budget_exceeded).
                budget.remaining(project, await budget.of_project(db, project.id))
                ticket = self.sandboxes.claim(session.id, project.owner_id)
                run = Run(
                    session_id=session.id,
                    status=RunStatus.running if ticket.granted.is_set() else RunStatus.queued,
                    query=body.query,
                    model=model_id,
                    file_ids=file_ids,
                    started_at=utcnow() if ticket.granted.is_set() else None,
                )
                db.add(run)
                await db.commit()
            recorder = EventRecorder(run.id, self.events, self.factory)
            if ticket.granted.is_set():
                await self._announce_start(run, recorder)
            else:
                await recorder.emit("run.queued", position=ticket.position)
        except BaseException:
            if ticket is not None:
                self.sandboxes.withdraw(ticket)
                self.sandboxes.release(session.id)
            await self.locks.release(str(session.id), token)
            raise
        live = LiveRun(run.id, session.id)
        self._live[run.id] = live
        live.task = asyncio.create_task(
            self._execute(live, run, recorder, token, ticket), name=f"run-{run.id}"
        )
        return run

    async def _announce_start(self, run: Run, recorder: EventRecorder) -> None:
        await recorder.emit(
            "run.started", session_id=str(run.session_id), model=run.model, query=run.query
        )

    async def _wait_for_slot(
        self,
        live: LiveRun,
        run: Run,
        recorder: EventRecorder,
        ticket: SlotTicket,
        announce: bool = True,
    ) -> None:
        """Wait, queued, for a sandbox slot; then the run is running (and says so)."""
        announced, announced_at = ticket.position, time.monotonic()
        while not await ticket.wait(QUEUE_POLL_SECONDS):
            if live.stop.is_set():  # cancelled here or on another replica (_watch_cancels)
                self.sandboxes.withdraw(ticket)
                raise RunCancelled
            position = ticket.position
            if tell_position(position, announced, time.monotonic() - announced_at):
                announced, announced_at = position, time.monotonic()
                await recorder.emit("run.queued", position=announced)
        async with self.factory() as db:
            await db.execute(
                _update_run(run.id).values(
                    status=RunStatus.running,
                    started_at=func.coalesce(Run.started_at, literal(utcnow(), UTCDateTime)),
                )
            )
            await db.commit()
        if announce:
            await self._announce_start(run, recorder)

    async def _check_files(
        self, db: AsyncSession, session: Session, file_ids: list[uuid.UUID]
    ) -> None:
        found = set(
            await db.scalars(
                select(File.id).where(File.project_id == session.project_id, File.id.in_(file_ids))
            )
        )
        missing = [str(f) for f in file_ids if f not in found]
        if missing:
            raise BadRequest(
                f"These files are not in this session's project: {', '.join(missing)}.",
                code="unknown_file",
            )

    # Following -----------------------------------------------------------------------
    async def follow(self, run_id: uuid.UUID, after: int) -> AsyncIterator[RunEvent | None]:
        """The run's events after `after` as they come, until run.finished (None: nothing new
        for a while, a heartbeat). From the live log; while that cannot be reached, from the
        database, where runs write their events meanwhile (see EventRecorder)."""
        last = after
        try:
            if not await self.events.exists(str(run_id)):
                # A run that waits outlived the live log it started with (an in-process log
                # after a restart): what was stored comes first, then what comes live.
                async with self.requests_factory() as db:
                    stored = list(
                        await db.scalars(
                            select(RunEventRow)
                            .where(RunEventRow.run_id == run_id, RunEventRow.seq > last)
                            .order_by(RunEventRow.seq)
                        )
                    )
                for row in stored:
                    last = row.seq
                    yield RunEvent(row.seq, row.event, row.data)
                    if row.event == "run.finished":
                        return
            async for event in self.events.follow(str(run_id), last):
                if event is not None:
                    last = event.seq
                yield event
            return
        except Exception as exc:  # Redis is gone (the in-process log cannot fail)
            log.warning(
                "run %s: the live event log failed (%r); following the database", run_id, exc
            )
        while True:
            async with self.requests_factory() as db:
                stored = list(
                    await db.scalars(
                        select(RunEventRow)
                        .where(RunEventRow.run_id == run_id, RunEventRow.seq > last)
                        .order_by(RunEventRow.seq)
                    )
                )
            for row in stored:
                last = row.seq
                yield RunEvent(row.seq, row.event, row.data)
                if row.event == "run.finished":
                    return
            yield None
            await asyncio.sleep(STORED_POLL_SECONDS)

    # Cancelling --------------------------------------------------------------------
    def is_live(self, run_id: uuid.UUID) -> bool:
        return run_id in self._live

    async def cancel(self, run_id: uuid.UUID, wait_seconds: float = 15.0) -> None:
        """Ask the run to stop (here or on whichever replica runs it) and wait for it to end."""
        live = self._live.get(run_id)
        if live is None and await self._cancel_waiting(run_id):
            return
        if live is None:
            await self.events.request_cancel(str(run_id))
            deadline = time.monotonic() + wait_seconds
            while time.monotonic() < deadline:
                async with self.requests_factory() as db:
                    status = await db.scalar(select(Run.status).where(Run.id == run_id))
                if status is None or status not in ACTIVE:
                    return
                await asyncio.sleep(0.2)
            return
        live.stop.set()
        await asyncio.wait_for(live.done.wait(), wait_seconds)

    async def stop_waiting(self, session_ids: list[uuid.UUID], reason: str) -> None:
        """End the runs of these sessions that wait for the user (their streams end too)."""
        async with self.factory() as db:
            waiting = list(
                await db.scalars(
                    select(Run.id).where(Run.session_id.in_(session_ids), Run.status.in_(WAITING))
                )
            )
        for run_id in waiting:
            await self._end_waiting(run_id, RunStatus.cancelled, reason)

    async def _cancel_waiting(self, run_id: uuid.UUID) -> bool:
        """Stop a run that waits for the user (no replica runs it). Whether it waited."""
        return await self._end_waiting(run_id, RunStatus.cancelled, "Stopped by the user.")

    async def _end_waiting(
        self,
        run_id: uuid.UUID,
        status: RunStatus,
        error: str,
        since_before: datetime | None = None,
    ) -> bool:
        """End a run that waits for the user (since before `since_before`, if given), unless
        an answer took it first. Whether it ended here."""
        async with self.factory() as db:
            waiting = update(Run).where(Run.id == run_id, Run.status.in_(WAITING))
            if since_before is not None:
                waiting = waiting.where(Run.waiting_since < since_before)
            # Taken in one statement: an answer arriving now finds it no longer waiting.
            taken = await db.execute(waiting.values(status=status))
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                return False
            run = await db.get(Run, run_id, options=ROW_ONLY, populate_existing=True)
            assert run is not None
            event = await self._finish_unrun(db, run, status, error)
            await db.commit()
        await self._publish_end(run_id, event)
        return True

    # Running ------------------------------------------------------------------------
    async def _execute(
        self,
        live: LiveRun,
        run: Run,
        recorder: EventRecorder,
        token: str,
        ticket: SlotTicket,
        resume: _Resume | None = None,
    ) -> None:
        started = time.monotonic()
        keep_lock = asyncio.create_task(self._keep_lock(live.session_id, token))
        outcome = _Outcome()
        if resume is not None:  # the totals so far go on, and the time since it started
            outcome.tokens_in, outcome.tokens_out = run.tokens_in, run.tokens_out
            outcome.cost_usd = run.cost_usd
            if run.started_at is not None:
                started -= max(0.0, (utcnow() - run.started_at).total_seconds())
        try:
            if not ticket.granted.is_set():
                await self._wait_for_slot(live, run, recorder, ticket, announce=resume is None)
            await self._answer(live, run, recorder, outcome, ticket, resume)
            outcome.status = RunStatus.succeeded
        except RunCancelled:
            outcome.status, outcome.error = RunStatus.cancelled, "Stopped by the user."
        except BudgetExceeded as exc:
            outcome.error = str(exc)
        except MaxStepsReached as exc:
            outcome.error = str(exc)
        except SandboxUnavailable as exc:  # e.g. the sandbox service went away since start()
            outcome.error = f"Analysis is disabled: {exc}"
        except ModelFailed as exc:  # already a sentence with the cause and the fix
            outcome.error = str(exc)
        except AgentGenerationError as exc:
            limits = call_limits(self.settings, run.model)
            outcome.error = limits.failure(exc.__cause__ or exc)
        except Exception as exc:
            log.exception("run %s failed", run.id)
            outcome.error = _failure_message(exc)
        finally:
            # Until its end is recorded or handed to _record_later, the sweeper leaves it.
            self._ending.add(run.id)
            self.sandboxes.withdraw(ticket)
            self.sandboxes.release(live.session_id)
            if not await self._wait_for_user(live, run, recorder, outcome, token, keep_lock):
                await self._end(live, run, recorder, outcome, token, keep_lock, started)
            self._ending.discard(run.id)
            live.done.set()

    async def _wait_for_user(
        self,
        live: LiveRun,
        run: Run,
        recorder: EventRecorder,
        outcome: _Outcome,
        token: str,
        keep_lock: asyncio.Task[None],
    ) -> bool:
        """If the agent asked the user, store the run as waiting: it then holds nothing (no
        lock, thread, worker or connection). Whether it waits."""
        if outcome.pause is None or outcome.status != RunStatus.succeeded:
            return False
        try:
            requested = await self._suspend(run, outcome, recorder)
        except Exception:
            log.exception("could not suspend %s", run.id)
            outcome.status, outcome.error = RunStatus.failed, SUSPEND_FAILED
            return False
        keep_lock.cancel()
        await _best_effort(self.locks.release(str(live.session_id), token), f"unlock {run.id}")
        self._live.pop(run.id, None)
        # Only now is the user told: an answer given at once finds the session free.
        await _best_effort(recorder.publish(requested), f"announce that {run.id} waits")
        return True

    async def _end(
        self,
        live: LiveRun,
        run: Run,
        recorder: EventRecorder,
        outcome: _Outcome,
        token: str,
        keep_lock: asyncio.Task[None],
        started: float,
    ) -> None:
        # Each of these is tried even when another fails (say Redis or the database is
        # down). What the database could not take is stored once it answers again.
        recorded = await _best_effort(
            self._save_outcome(run, outcome), f"record the end of run {run.id}"
        )
        # run.finished and every event before it are stored while the lock is still held:
        # a client that deletes the session on run.finished finds nothing left to write.
        finished = recorder.prepare(
            "run.finished",
            status=str(outcome.status),
            error=outcome.error,
            tokens_in=outcome.tokens_in,
            tokens_out=outcome.tokens_out,
            tokens_estimated=outcome.tokens_estimated or run.tokens_estimated,
            cost_usd=outcome.cost_usd,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        await _best_effort(recorder.flush(), f"store the events of run {run.id}")
        # The session takes questions again before anyone hears this run ended: a
        # client that asks its follow-up on run.finished must not find it busy.
        # Until its end is stored the lock stays held (and renewed): no replica's sweeper
        # may take the run for one whose process died.
        if recorded:
            keep_lock.cancel()
            await _best_effort(
                self.locks.release(str(live.session_id), token), f"unlock after run {run.id}"
            )
        self._live.pop(run.id, None)
        await _best_effort(recorder.publish(finished), f"announce the end of run {run.id}")
        await _best_effort(
            self.events.expire(str(run.id), LOG_RETENTION_SECONDS), f"expire run {run.id}"
        )
        if not recorded or recorder.pending:
            self._unrecorded[run.id] = asyncio.create_task(
                self._record_later(run, outcome, recorder, keep_lock if not recorded else None)
            )
            if not recorded:
                self._unrecorded[run.id].add_done_callback(
                    lambda _: asyncio.ensure_future(
                        _best_effort(
                            self.locks.release(str(live.session_id), token),
                            f"unlock after run {run.id}",
                        )
                    )
                )

    async def _record_later(
        self,
        run: Run,
        outcome: _Outcome,
        recorder: EventRecorder,
        keep_lock: asyncio.Task[None] | None = None,
    ) -> None:
        """Store a run's end and its last events once the database answers again (the
        session's lock, if still held, is renewed meanwhile and freed afterwards)."""
        deadline = time.monotonic() + RECORD_RETRY_SECONDS
        try:
            while time.monotonic() < deadline:
                await asyncio.sleep(RECORD_RETRY_INTERVAL_SECONDS)
                try:
                    await self._save_outcome(run, outcome)
                    await recorder.flush()
                except Exception as exc:
                    log.debug("run %s: its end is not recorded yet: %r", run.id, exc)
                    continue
                log.info("run %s: its end was recorded once the database answered", run.id)
                return
            log.error("run %s: its end could not be recorded; the sweeper ends it", run.id)
        finally:
            if keep_lock is not None:
                keep_lock.cancel()
            self._unrecorded.pop(run.id, None)

    async def _suspend(self, run: Run, outcome: _Outcome, recorder: EventRecorder) -> RunEvent:
        """Store what the run waits for, the agent's memory and the event that asks the
        user (the caller sends it live once the session's lock is free)."""
        pause = outcome.pause
        assert pause is not None
        if pause.kind == "input":
            status = RunStatus.waiting_input
            pending: dict[str, Any] = {"question": pause.question, "target": pause.target}
            event, data = "input.requested", {"question": pause.question}
        else:
            status = RunStatus.waiting_approval
            pending = {"code": pause.code, "model_output": pause.model_output}
            pending["tokens"] = [pause.tokens_in, pause.tokens_out]
            event, data = "approval.requested", {"code": pause.code}
        async with self.factory() as db:
            row = await db.get(Run, run.id, options=ROW_ONLY)
            if row is None:
                raise LookupError(f"run {run.id} was deleted")
            row.status = status
            row.pending = {"kind": pause.kind, "step": pause.step, **pending}
            row.agent_memory = pause.memory
            row.waiting_since = utcnow()
            row.tokens_in, row.tokens_out = outcome.tokens_in, outcome.tokens_out
            row.cost_usd = outcome.cost_usd
            await db.commit()
        requested = recorder.prepare(event, step=pause.step, **data)
        await recorder.flush()
        return requested

    async def answer(self, run_id: uuid.UUID, text: str) -> None:
        """Answer the question a waiting run asked, and go on with the run (on this replica,
        whichever started it): 409 not_waiting_input unless it waits for an answer."""
        await self._go_on(
            run_id,
            RunStatus.waiting_input,
            Conflict("This run is not waiting for an answer.", code="not_waiting_input"),
            _Reply(answer=text),
        )

    async def decide(
        self, run_id: uuid.UUID, decision: str, code: str | None, feedback: str | None
    ) -> None:
        """Approve, edit or reject the code a run in review mode waits with, and go on:
        409 not_waiting_approval unless it waits for approval."""
        await self._go_on(
            run_id,
            RunStatus.waiting_approval,
            Conflict("This run is not waiting for approval.", code="not_waiting_approval"),
            _Reply(decision=decision, code=code, feedback=feedback),
        )

    async def _go_on(
        self, run_id: uuid.UUID, waiting: RunStatus, not_waiting: Conflict, reply: _Reply
    ) -> None:
        async with self.factory() as db:
            run = await db.get(Run, run_id, options=ROW_ONLY)
            if run is None or run.status != waiting:
                raise not_waiting
            session_id = run.session_id
        token = await self.locks.acquire(str(session_id), self.lock_ttl)
        if token is None:  # another replica is taking a reply to this run now
            raise not_waiting
        ticket: SlotTicket | None = None
        try:
            async with self.factory() as db:
                # Only one reply is taken, whichever replica it reaches first.
                taken = await db.execute(
                    update(Run)
                    .where(Run.id == run_id, Run.status == waiting)
                    .values(status=RunStatus.queued, waiting_since=None)
                )
                if taken.rowcount != 1:  # type: ignore[attr-defined]
                    raise not_waiting
                run = await db.get(Run, run_id, options=ROW_ONLY, populate_existing=True)
                assert run is not None and run.pending is not None
                owner = await db.scalar(
                    select(Project.owner_id)
                    .join(Session, Session.project_id == Project.id)
                    .where(Session.id == session_id)
                )
                ticket = self.sandboxes.claim(session_id, owner or session_id)
                pending, memory = dict(run.pending), list(run.agent_memory or [])
                event, note = reply.note(pending)
                if waiting == RunStatus.waiting_input:
                    run.inputs = [*run.inputs, note]
                else:
                    run.approvals = [*run.approvals, note]
                run.pending, run.agent_memory = None, None
                if ticket.granted.is_set():
                    run.status = RunStatus.running
                await db.commit()
                last = await db.scalar(
                    select(func.max(RunEventRow.seq)).where(RunEventRow.run_id == run_id)
                )
            recorder = EventRecorder(run_id, self.events, self.factory, last_seq=last or 0)
            await recorder.emit(event, **note)
            if not ticket.granted.is_set():
                await recorder.emit("run.queued", position=ticket.position)
        except BaseException:
            if ticket is not None:
                self.sandboxes.withdraw(ticket)
                self.sandboxes.release(session_id)
            await self.locks.release(str(session_id), token)
            raise
        live = LiveRun(run_id, session_id)
        self._live[run_id] = live
        live.task = asyncio.create_task(
            self._execute(live, run, recorder, token, ticket, _Resume(memory, pending, reply)),
            name=f"run-{run_id}",
        )

    async def _keep_lock(self, session_id: uuid.UUID, token: str) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl / 3)
            try:
                renewed = await self.locks.renew(str(session_id), token, self.lock_ttl)
            except Exception as exc:  # Redis is down: the run's next cancel check stops it
                log.warning("could not renew the lock of session %s: %r", session_id, exc)
                continue
            if not renewed:
                log.warning("the lock of session %s was lost while a run held it", session_id)

    async def _save_outcome(self, run: Run, outcome: _Outcome) -> None:
        async with self.factory() as db:
            await db.execute(
                _update_run(run.id).values(
                    status=outcome.status,
                    error=outcome.error,
                    final_answer=outcome.final_answer,
                    finished_at=utcnow(),
                    **outcome.totals(),
                )
            )
            await db.commit()

    async def _answer(
        self,
        live: LiveRun,
        run: Run,
        recorder: EventRecorder,
        outcome: _Outcome,
        ticket: SlotTicket,
        resume: _Resume | None = None,
    ) -> None:
        async with self.factory() as db:
            session = await db.get(Session, live.session_id)
            assert session is not None
            files = list(
                await db.scalars(
                    select(File).where(File.project_id == session.project_id).order_by(File.name)
                )
            )
            history = await self._history(db, session.id, run.id)
            snapshot = session.snapshot
            review = session.autonomy == "review"
            # Other sessions of the project may have spent while this run was queued.
            project = await db.get(Project, session.project_id)
            assert project is not None
            try:
                left = budget.remaining(project, await budget.of_project(db, project.id))
            except Forbidden as exc:
                raise BudgetExceeded(exc.detail) from None
            # Which version of each file this run's workspace has (the run view tells when
            # a file changed since).
            run.files = [
                {"file_id": str(f.id), "name": f.name, "version": f.version, "sha256": f.sha256}
                for f in files
            ]
            await db.execute(_update_run(run.id).values(files=run.files))
            await db.commit()
        # No connection is held while files download and previews are computed.
        data_dir = self.settings.DATA_DIR
        workspace = workspace_dir(data_dir, live.session_id)
        await materialize(self.storage, workspace, manifest_path(data_dir, live.session_id), files)
        try:
            marker = snapshot_marker_path(data_dir, live.session_id)
            await snapshots.download(self.storage, workspace, marker, live.session_id, snapshot)
        except Exception:  # the run goes on; the worker restores what the workspace has
            log.exception("could not fetch the snapshot of session %s", live.session_id)
        unpreviewed = {f.id for f in files if f.preview is None}
        file_infos = [await self._describe(f, pinned=str(f.id) in run.file_ids) for f in files]
        await self._keep_previews([f for f in files if f.id in unpreviewed and f.preview])
        generation = snapshot["generation"] if snapshot else None
        # A new worker takes a few seconds (more when it restores variables): say so, rather
        # than leave the user looking at "thinking".
        worker, fresh = await self.sandboxes.acquire(
            ticket,
            generation,
            on_start=lambda: recorder.emit("sandbox.starting", restoring=generation is not None),
        )
        worker.artifact_budget = await self._artifact_room(live.session_id)
        prompt = prompting.render_system_prompt(
            files=file_infos,
            history=history,
            variables=_variables(snapshot, worker.take_restore_report() if fresh else None, fresh),
            authorized_imports=list(DEFAULT_AUTHORIZED_IMPORTS),
        )
        try:
            await self._drive(
                live, run, recorder, outcome, worker, prompt, workspace, left, resume, review
            )
        finally:
            if not live.stop.is_set():  # a cancelled run's worker was killed: nothing to save
                await _best_effort(
                    self._save_snapshot(live.session_id, worker, workspace, snapshot),
                    f"save the variables of session {live.session_id}",
                )

    async def _drive(
        self,
        live: LiveRun,
        run: Run,
        recorder: EventRecorder,
        outcome: _Outcome,
        worker: SandboxWorker,
        prompt: str,
        workspace: Path,
        left: budget.Remaining,
        resume: _Resume | None = None,
        review: bool = False,
    ) -> None:
        """Run the agent in a thread of its own and record what it yields, until it ends (or
        waits for the user: then its memory is kept in `outcome.pause`)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def on_result(result: StepResult) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, ("result", result))

        def on_verdict(verdict: Verdict) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, ("item", verdict))

        guard = budget.BudgetGuard(run.model, left, self.settings.LLM_PRICES)
        model = create_model(self.settings, run.model)
        limits = call_limits(self.settings, run.model)
        rounds = self.settings.AGENT_VERIFY_ROUNDS
        check = AnswerCheck(
            model,
            run.query,
            rounds,
            on_verdict,
            on_tokens=lambda tokens_in, tokens_out: guard.count(tokens_in, tokens_out, agent),
        )

        executor = SandboxExecutor(worker, on_result=on_result, review=review)
        agent = create_agent(
            model=model,
            limits=limits,
            executor=executor,
            system_prompt=prompt,
            authorized_imports=list(DEFAULT_AUTHORIZED_IMPORTS),
            max_steps=self.settings.AGENT_MAX_STEPS,
            planning_interval=self.settings.AGENT_PLANNING_INTERVAL,
            final_answer_checks=[check] if rounds else None,
            step_callbacks={ActionStep: guard.step_callback, PlanningStep: guard.step_callback},
        )

        translator = StepTranslator(self, run, recorder, outcome, workspace)

        def prompt_tokens() -> int:  # what the step being written was prompted with
            return limits.count(messages=[m.dict() for m in agent.write_memory_to_messages()])

        replay: str | None = None
        if resume is not None:  # the agent is built again, with its memory and the reply
            steps = agent_memory.load(resume.memory)
            pending, reply = resume.pending, resume.reply
            step = int(pending["step"])
            translator.step = step + 1
            if pending["kind"] == "input":
                target = pending.get("target")
                _answer_in_memory(steps, pending, reply.answer or "")
                if target:
                    await asyncio.to_thread(worker.set_variables, {target: reply.answer})
            elif reply.decision == "reject":  # the model reads why, and writes new code
                _reject_in_memory(steps, step, reply.feedback)
                await translator.rejected(step, pending, reply.feedback)
            else:  # approved (maybe edited): the step runs again from what the model wrote
                steps = [
                    s for s in steps if not (isinstance(s, ActionStep) and s.step_number == step)
                ]
                code = reply.code if reply.decision == "edit" and reply.code else pending["code"]
                replay = _with_code(pending.get("model_output") or "", code)
                executor.approved_next = True
                translator.replaying(step, pending.get("tokens") or [0, 0])

        def drive() -> None:
            try:
                if resume is None:
                    stream = agent.run(run.query, stream=True, reset=True)
                else:
                    stream = agent.continue_run(run.query, steps, translator.step, replay)
                for item in stream:
                    if live.stop.is_set():
                        with contextlib.suppress(RuntimeError):
                            # No further model call or code step starts. smolagents yields in
                            # a finally block, which makes close() complain; that is harmless.
                            stream.close()
                        break
                    loop.call_soon_threadsafe(queue.put_nowait, ("item", item))
                loop.call_soon_threadsafe(queue.put_nowait, ("done", None))
            except BaseException as exc:  # handed to the event loop, which decides
                # An interrupt by the budget guard ends the agent with its own error.
                failure = exc if guard.exceeded is None else BudgetExceeded(guard.exceeded)
                if isinstance(failure, SandboxLost):
                    failure = failure.unavailable
                loop.call_soon_threadsafe(queue.put_nowait, ("error", failure))

        thread = threading.Thread(target=drive, name=f"agent-{run.id}", daemon=True)
        thread.start()
        held: tuple[str, Any] | None = None  # taken from the queue while joining text pieces
        try:
            while True:
                if held is not None:
                    (kind, payload), held = held, None
                else:
                    try:
                        kind, payload = await asyncio.wait_for(queue.get(), CANCEL_POLL_SECONDS)
                    except TimeoutError:
                        kind, payload = "tick", None
                if live.stop.is_set():  # cancelled here or on another replica (_watch_cancels)
                    raise RunCancelled
                if recorder.live_log_error is not None:
                    # Redis is gone: no lock, no cancel, no live stream. The run stops (its
                    # events are in the database, where streams follow them meanwhile).
                    raise recorder.live_log_error
                if kind == "item":
                    if isinstance(payload, ChatMessageStreamDelta):
                        payload, held = await _join_pieces(payload, queue, DELTA_WINDOW_SECONDS)
                    await translator.handle(payload)
                elif kind == "result":
                    await translator.step_result(payload)
                elif kind == "error":  # the agent's own end (its thread is finishing)
                    await asyncio.to_thread(thread.join, CANCEL_GRACE_SECONDS)
                    raise payload
                elif kind == "done":
                    if outcome.pause is not None:  # kept to build the agent again
                        outcome.pause.memory = agent_memory.dump(agent.memory.steps)
                        outcome.pause.target = _assigned_name(agent.memory.steps, outcome.pause)
                    return
        except BaseException:
            # Cancelled, or something here failed (a service went away): the agent must not
            # go on calling the model and running code for a run that has ended.
            if thread.is_alive():
                agent.interrupt()
                await asyncio.to_thread(worker.kill)
                await asyncio.to_thread(thread.join, CANCEL_GRACE_SECONDS)
            stopped = sys.exc_info()[1]
            await _best_effort(
                translator.keep_unfinished(
                    "Stopped by the user." if isinstance(stopped, RunCancelled) else None,
                    limits,
                    prompt_tokens,
                ),
                f"keep the unfinished step of {run.id}",
            )
            raise

    async def _artifact_room(self, session_id: uuid.UUID) -> int:
        """What the session may still keep of charts, tables and files, in bytes."""
        async with self.factory() as db:
            kept = await db.scalar(
                select(func.coalesce(func.sum(Artifact.size), 0)).where(
                    Artifact.session_id == session_id
                )
            )
        return max(0, (self.settings.SESSION_ARTIFACTS_MB << 20) - int(kept or 0))

    async def _save_snapshot(
        self,
        session_id: uuid.UUID,
        worker: SandboxWorker,
        workspace: Path,
        previous: dict[str, Any] | None,
    ) -> None:
        """Have the worker snapshot the session's variables; store them as a new generation."""
        limit = self.settings.SANDBOX_SNAPSHOT_MB << 20
        if not limit or not worker.alive:
            return
        # The snapshot counts against the workspace's quota; the one it replaces is freed.
        quota = self.settings.SANDBOX_DISK_MB << 20
        used = (await asyncio.to_thread(hostfs.usage, workspace)).bytes
        room = quota - used + (int(previous["bytes"]) if previous else 0)
        allowed = max(0, min(limit, room))
        report = await asyncio.to_thread(worker.snapshot, allowed)
        if not report.changed:
            return
        record = await snapshots.upload(self.storage, workspace, session_id, report, allowed)
        async with self.factory() as db:
            session = await db.get(Session, session_id)
            if session is not None:
                session.snapshot = record
                await db.commit()
        if session is None:  # deleted meanwhile
            await snapshots.delete(self.storage, session_id, record["generation"])
            return
        worker.snapshot_generation = record["generation"]
        marker = snapshot_marker_path(self.settings.DATA_DIR, session_id)
        await asyncio.to_thread(snapshots.remember, marker, record["generation"])
        if previous:
            await snapshots.delete(self.storage, session_id, str(previous["generation"]))

    async def _keep_previews(self, files: list[File]) -> None:
        """Store previews computed for the prompt, so the next run and the browser reuse them."""
        if not files:
            return
        async with self.factory() as db:
            for file in files:
                await db.execute(
                    update(File)
                    .where(File.id == file.id)
                    .values(preview=file.preview, row_count=file.row_count)
                )
            await db.commit()

    async def _describe(self, file: File, pinned: bool) -> prompting.FileInfo:
        size = prompting.human_size(file.size)
        if preview_kind(file.name) is None:
            return prompting.FileInfo(file.name, size, pinned=pinned)
        try:
            preview = await files_service.preview(
                self.storage, file, self.settings.DATA_DIR / "cache" / "files"
            )
        except PreviewError as exc:
            return prompting.FileInfo(
                file.name, size, pinned=pinned, note=f"(could not be previewed: {exc})"
            )
        return prompting.FileInfo(
            file.name,
            size,
            row_count=preview["row_count"],
            pinned=pinned,
            columns=prompting.columns_from_preview(preview),
            read=prompting.read_hint(preview),
            sheets=list(preview.get("sheets") or []),
        )

    async def _history(
        self, db: AsyncSession, session_id: uuid.UUID, current: uuid.UUID
    ) -> list[prompting.Turn]:
        runs = (
            await db.execute(
                select(Run.query, Run.final_answer)
                .where(
                    Run.session_id == session_id,
                    Run.id != current,
                    Run.status == RunStatus.succeeded,
                )
                .order_by(Run.created_at.desc())
                .limit(HISTORY_TURNS)
            )
        ).all()
        return [prompting.Turn(query, answer or "") for query, answer in reversed(runs)]

    async def store_artifact(
        self, run: Run, step: int, artifact: ArtifactFile, workspace: Path
    ) -> ArtifactOut:
        """Upload an artifact's bytes and record it; the sandbox's own copy is then removed."""
        key = f"sessions/{run.session_id}/artifacts/{uuid.uuid4().hex}"
        relative = artifact.path.relative_to(workspace).as_posix()
        try:
            await upload(self.storage, workspace, relative, key, artifact.mime)
        except (hostfs.UnsafePath, FileNotFoundError):
            raise
        except Exception as exc:
            raise StorageFailed(
                "Object storage stopped answering, so the run was stopped: this step's charts, "
                f"tables and files could not be kept. Ask again once it is back. ({exc})"
            ) from exc
        if relative.startswith(f"{BOOKKEEPING_DIR}/"):
            # The worker's own copy; removed without following links (the code controls it).
            await asyncio.to_thread(hostfs.remove, workspace, relative)
        async with self.factory() as db:
            row = Artifact(
                run_id=run.id,
                session_id=run.session_id,
                step=step,
                kind=artifact.kind,
                name=artifact.name,
                mime=artifact.mime,
                size=artifact.size,
                storage_key=key,
            )
            db.add(row)
            await db.commit()
            return ArtifactOut.model_validate(row)

    async def save_run_notes(
        self,
        run: Run,
        outcome: _Outcome,
        plan: dict[str, Any] | None = None,
        verification: dict[str, Any] | None = None,
    ) -> None:
        """Store a plan or an answer check with the run, and the run's totals with it."""
        async with self.factory() as db:
            row = await db.get(Run, run.id, options=ROW_ONLY)
            if row is not None:
                if plan is not None:
                    row.plans = [*row.plans, plan]
                if verification is not None:
                    row.verifications = [*row.verifications, verification]
                for column, value in outcome.totals().items():
                    setattr(row, column, value)
            await db.commit()

    async def save_step(self, run: Run, step: RunStep, outcome: _Outcome) -> None:
        async with self.factory() as db:
            db.add(step)
            await db.execute(_update_run(run.id).values(**outcome.totals()))
            await db.commit()

    # Interrupted runs -----------------------------------------------------------------
    def start_sweeper(self) -> None:
        """Every sixth of the lock's TTL, fail the runs nobody runs any more: a run whose
        replica died ends about one TTL after it died (recover_interrupted_runs). And every
        CANCEL_POLL_SECONDS, stop the runs here that another replica was asked to cancel."""
        self._sweeper = asyncio.create_task(self._sweep_forever())
        self._cancel_watch = asyncio.create_task(self._watch_cancels())

    async def _watch_cancels(self) -> None:
        """One look for all the runs of this replica, queued or running, however many."""
        while True:
            await asyncio.sleep(CANCEL_POLL_SECONDS)
            live = {str(run_id): run for run_id, run in self._live.items() if not run.stop.is_set()}
            try:
                cancelled = await self.events.cancels_requested(list(live))
            except Exception as exc:  # Redis is down: each run notices through its log
                log.debug("could not look for cancelled runs: %r", exc)
                continue
            for run_id in cancelled:
                live[run_id].stop.set()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl / 6)
            await _best_effort(self.recover_interrupted_runs(), "sweep interrupted runs")

    async def recover_interrupted_runs(self) -> int:
        """Fail the active runs that no replica runs any more, with a run.finished to end their
        streams: their process died (the session lock expired), or could not record the end."""
        recovered: list[tuple[Run, RunEvent]] = []
        # Every replica sweeps every few seconds, with maybe hundreds of runs active: ids
        # first, the locks checked holding no connection, whole rows only for the orphans.
        async with self.factory() as db:
            active = (
                await db.execute(select(Run.id, Run.session_id).where(Run.status.in_(RUNNING)))
            ).all()
        orphans = [
            run_id
            for run_id, session_id in active
            if not self._here(run_id) and await self.locks.holder(str(session_id)) is None
        ]
        if orphans:
            async with self.factory() as db:
                runs = await db.scalars(
                    select(Run).where(Run.id.in_(orphans), Run.status.in_(RUNNING))
                )
                for run in list(runs):
                    if self._here(run.id) or await self.locks.holder(str(run.session_id)):
                        continue  # taken up meanwhile
                    recovered.append(
                        (run, await self._finish_unrun(db, run, RunStatus.failed, INTERRUPTED))
                    )
                await db.commit()
        # Runs that waited for the user too long end here too (on whichever replica).
        timeout = self.settings.RUN_INPUT_TIMEOUT_SECONDS
        cutoff = utcnow() - timedelta(seconds=timeout)
        async with self.factory() as db:
            expired = list(
                await db.scalars(
                    select(Run.id).where(Run.status.in_(WAITING), Run.waiting_since < cutoff)
                )
            )
        error = INPUT_TIMED_OUT.format(
            time=f"{timeout / 3600:g} hours" if timeout >= 3600 else f"{timeout:g} seconds"
        )
        for run_id in expired:
            if await self._end_waiting(run_id, RunStatus.failed, error, since_before=cutoff):
                log.warning("run %s waited too long for the user and was stopped", run_id)
        for run, event in recovered:
            await self._publish_end(run.id, event)
        if recovered:
            log.warning("marked %d interrupted run(s) as failed", len(recovered))
        return len(recovered)

    def _here(self, run_id: uuid.UUID) -> bool:
        """Whether this replica runs the run, or is recording its end."""
        return run_id in self._live or run_id in self._ending or run_id in self._unrecorded

    async def _finish_unrun(
        self, db: AsyncSession, run: Run, status: RunStatus, error: str | None
    ) -> RunEvent:
        """End a run that no replica runs (its process died, or it waits for the user): its
        row, and the run.finished its streams end with (to store; the caller publishes it)."""
        run.status, run.error, run.finished_at = status, error, utcnow()
        run.pending, run.agent_memory, run.waiting_since = None, None, None
        last = await db.scalar(
            select(func.max(RunEventRow.seq)).where(RunEventRow.run_id == run.id)
        )
        seq = max(last or 0, await self._last_logged(run.id)) + 1
        data = {
            "run_id": str(run.id),
            "seq": seq,
            "status": str(status),
            "error": error,
            "tokens_in": run.tokens_in,
            "tokens_out": run.tokens_out,
            "cost_usd": run.cost_usd,
            "duration_ms": None,
        }
        db.add(RunEventRow(run_id=run.id, seq=seq, event="run.finished", data=data))
        return RunEvent(seq, "run.finished", data)

    async def _publish_end(self, run_id: uuid.UUID, event: RunEvent) -> None:
        """Streams that follow the run live (from any replica) end with this event."""
        if await self.events.exists(str(run_id)):
            await self.events.append(str(run_id), event)
            await self.events.expire(str(run_id), LOG_RETENTION_SECONDS)

    async def _last_logged(self, run_id: uuid.UUID) -> int:
        """The highest seq in the run's live log (events not yet flushed to the database)."""
        events = await self.events.read(str(run_id), 0)
        return events[-1].seq if events else 0

    async def close(self) -> None:
        for task in (self._sweeper, self._cancel_watch):
            if task is not None:
                task.cancel()
        for pending in list(self._unrecorded.values()):
            pending.cancel()
        for live in list(self._live.values()):
            live.stop.set()
        tasks = [live.task for live in self._live.values() if live.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=CANCEL_GRACE_SECONDS)


@dataclass
class _Outcome:
    status: RunStatus = RunStatus.failed
    error: str | None = None
    final_answer: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    # Some of its tokens were counted here, not by the model's server.
    tokens_estimated: bool = False
    pause: _Pause | None = None  # the agent asked the user: the run waits

    def totals(self) -> dict[str, Any]:
        """The run's columns that add up its model calls so far. Estimated tokens mark the
        run for good: a later call the server counted does not clear the mark."""
        totals: dict[str, Any] = {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
        }
        if self.tokens_estimated:
            totals["tokens_estimated"] = True
        return totals


@dataclass
class _Pause:
    """What a step waits for (an answer, or approval of its code), and what is kept to go
    on once the user replies."""

    step: int
    kind: str = "input"  # or "approval"
    question: str = ""
    target: str | None = None  # the variable the code assigned ask_user(...) to
    code: str = ""  # the code waiting for approval
    model_output: str = ""  # what the model wrote for that step (replayed once approved)
    tokens_in: int = 0
    tokens_out: int = 0
    memory: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _Reply:
    """The user's reply to a waiting run: an answer, or a decision on its code."""

    answer: str | None = None
    decision: str | None = None  # approve | edit | reject
    code: str | None = None
    feedback: str | None = None

    def note(self, pending: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The event that says it was received, and what the run records of it."""
        step = int(pending["step"])
        if self.answer is not None:
            return "input.received", {
                "step": step,
                "question": pending["question"],
                "answer": self.answer,
            }
        note: dict[str, Any] = {"step": step, "decision": self.decision}
        if self.decision == "edit":
            note["code"] = self.code
        if self.feedback:
            note["feedback"] = self.feedback
        return "approval.received", note


@dataclass(frozen=True)
class _Resume:
    memory: list[dict[str, Any]]
    pending: dict[str, Any]
    reply: _Reply


def _with_code(model_output: str, code: str) -> str:
    """What the model wrote for a step, with `code` as its code block (an edit)."""
    thought = model_output.split("<code>", 1)[0].rstrip()
    return f"{thought}\n<code>\n{code.strip()}\n</code>"


def _update_run(run_id: uuid.UUID) -> Update:
    """An UPDATE of one run's row, from a unit of work that holds no Run object: the ORM
    need not look for loaded rows to bring up to date (it did, at every step of every run)."""
    return update(Run).where(Run.id == run_id).execution_options(synchronize_session=False)


def _reject_in_memory(steps: list[Any], step: int, feedback: str | None) -> None:
    """The rejected step's result, as the model will read it: why, and that nothing ran."""
    said = "The user rejected this code, so it did not run."
    said += f" Their feedback: {feedback}" if feedback else " They gave no reason."
    said += " Take it into account and write different code."
    for action in steps:
        if isinstance(action, ActionStep) and action.step_number == step:
            action.observations, action.error, action.action_output = said, None, None


def _assigned_name(steps: list[Any], pause: _Pause) -> str | None:
    """`name` when the asking step's code ends `name = ask_user(...)`: the answer goes there."""
    code = next(
        (s.code_action for s in steps if isinstance(s, ActionStep) and s.step_number == pause.step),
        None,
    )
    try:
        body = ast.parse(code or "").body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    if (
        isinstance(last, ast.Assign)
        and len(last.targets) == 1
        and isinstance(last.targets[0], ast.Name)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Name)
        and last.value.func.id == "ask_user"
    ):
        return last.targets[0].id
    return None


def _answer_in_memory(steps: list[Any], pending: dict[str, Any], answer: str) -> None:
    """Make the user's answer the asking step's result, as the model will read it."""
    for step in steps:
        if isinstance(step, ActionStep) and step.step_number == int(pending["step"]):
            said = f"ask_user returned the user's answer: {answer!r}"
            if pending.get("target"):
                said += f" (it is now the value of {pending['target']})"
            placeholder = str(UserQuestion(""))
            observations = step.observations or ""
            step.observations = (
                observations.replace(placeholder, said)
                if placeholder in observations
                else f"{observations}\n{said}".strip()
            )
            step.action_output = answer


async def _join_pieces(
    delta: ChatMessageStreamDelta, queue: asyncio.Queue[tuple[str, Any]], window: float
) -> tuple[ChatMessageStreamDelta, tuple[str, Any] | None]:
    """The model's text pieces that come within `window` seconds of `delta`, joined into one
    `model.delta`; anything else that comes ends the wait (it is handled next, in order).

    A fast model's tokens go out a few at a time instead of one event each; under load, the
    pieces that queued up while the event loop served other runs go out together too.

    Returns:
        The joined piece, and the first entry that was not a piece, if one came.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + window
    texts = [delta.content or ""]
    while True:
        try:
            entry: tuple[str, Any] | None = queue.get_nowait()
        except asyncio.QueueEmpty:
            left = deadline - loop.time()
            try:
                entry = await asyncio.wait_for(queue.get(), left) if left > 0 else None
            except TimeoutError:
                entry = None
        kind, item = entry if entry is not None else ("", None)
        if kind != "item" or not isinstance(item, ChatMessageStreamDelta) or item.tool_calls:
            if len(texts) == 1:
                return delta, entry
            return ChatMessageStreamDelta(content="".join(texts)), entry
        texts.append(item.content or "")


class StepTranslator:
    """Turns what smolagents yields (and what the sandbox reports) into events and rows."""

    def __init__(
        self,
        runner: RunOrchestrator,
        run: Run,
        recorder: EventRecorder,
        outcome: _Outcome,
        workspace: Path,
    ):
        self.workspace = workspace
        self.runner = runner
        self.run = run
        self.recorder = recorder
        self.outcome = outcome
        self.step = 1
        # The approved step that runs again (its model output is replayed, not streamed),
        # and the tokens its model call cost before the run waited (counted then).
        self._replayed: int | None = None
        self._carried: dict[int, tuple[int, int]] = {}
        self._started: set[int] = set()
        self._finished: set[int] = set()
        self._logs: dict[int, str] = {}
        self._streamed: dict[int, str] = {}  # what the model wrote of each step so far

    def replaying(self, step: int, tokens: list[int]) -> None:
        self.step = step
        self._replayed = step
        self._started.add(step)
        self._carried[step] = (int(tokens[0]), int(tokens[1]))

    async def rejected(self, step: int, pending: dict[str, Any], feedback: str | None) -> None:
        """Record the step whose code the user rejected (it did not run)."""
        tokens_in, tokens_out = (int(t) for t in pending.get("tokens") or [0, 0])
        error = "Rejected by the user" + (f": {feedback}" if feedback else ".")
        await self.runner.save_step(
            self.run,
            RunStep(
                run_id=self.run.id,
                index=step,
                thought=_thought(pending.get("model_output")),
                code=pending.get("code"),
                error=error,
                duration_ms=0,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
            ),
            self.outcome,
        )
        await self.recorder.emit(
            "step.finished", step=step, duration_ms=0, tokens_in=tokens_in, tokens_out=tokens_out
        )

    async def _ensure_started(self) -> None:
        if self.step not in self._started:
            self._started.add(self.step)
            await self.recorder.emit("step.started", step=self.step)

    async def handle(self, item: object) -> None:
        if isinstance(item, PlanDelta):
            if item.content:
                await self.recorder.emit("plan.delta", step=self.step, text=item.content)
        elif isinstance(item, PlanningStep):
            await self._plan(item)
        elif isinstance(item, Verdict):
            await self._verdict(item)
        elif isinstance(item, ChatMessageStreamDelta):
            if item.content and self.step != self._replayed:
                await self._ensure_started()
                self._streamed[self.step] = self._streamed.get(self.step, "") + item.content
                await self.recorder.emit("model.delta", step=self.step, text=item.content)
        elif isinstance(item, ToolCall):
            await self._ensure_started()
            await self.recorder.emit("step.code", step=self.step, code=str(item.arguments))
        elif isinstance(item, ActionStep):
            await self._finish_step(item)
        elif isinstance(item, FinalAnswerStep):
            if isinstance(item.output, UserQuestion):  # the run waits for the user's answer
                self.outcome.pause = _Pause(max(self._finished), question=item.output.question)
                return
            if isinstance(item.output, CodeForApproval):  # see _finish_step
                return
            self.outcome.final_answer = _answer_text(item.output)
            await self.recorder.emit("final", answer=self.outcome.final_answer)

    async def step_result(self, result: StepResult) -> None:
        await self._ensure_started()
        if result.logs:
            self._logs[self.step] = result.logs
            await self.recorder.emit(
                "step.output", step=self.step, output=result.logs[-OUTPUT_EVENT_CHARS:]
            )
        for artifact in result.artifacts:
            stored = await self.runner.store_artifact(self.run, self.step, artifact, self.workspace)
            await self.recorder.emit(
                "artifact", step=self.step, artifact=stored.model_dump(mode="json")
            )

    async def keep_unfinished(
        self, error: str | None, limits: CallLimits, prompt_tokens: Callable[[], int]
    ) -> None:
        """Record the step the run stopped in (cancelled, or failed outside the agent): what
        the model wrote of it so far, and its tokens (counted here: the server never said)."""
        step = self.step
        if step not in self._started or step in self._finished:
            return
        self._finished.add(step)
        text = self._streamed.get(step, "")
        tokens_out = limits.count(text=text) if text else 0
        tokens_in = await asyncio.to_thread(prompt_tokens) if text else 0
        self._spend(tokens_in, tokens_out)
        self.outcome.tokens_estimated = True
        error = error or "The run stopped before this step finished."
        await self.runner.save_step(
            self.run,
            RunStep(
                run_id=self.run.id,
                index=step,
                thought=text.strip().removeprefix("Thought:").strip() or None,
                output=self._logs.get(step),
                error=error,
                duration_ms=0,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
            ),
            self.outcome,
        )
        await self.recorder.emit("step.error", step=step, error=error)
        await self.recorder.emit(
            "step.finished", step=step, duration_ms=0, tokens_in=tokens_in, tokens_out=tokens_out
        )

    def _spend(self, tokens_in: int, tokens_out: int) -> None:
        self.outcome.tokens_in += tokens_in
        self.outcome.tokens_out += tokens_out
        cost = step_cost(self.run.model, tokens_in, tokens_out, self.runner.settings.LLM_PRICES)
        if cost is not None:
            self.outcome.cost_usd = (self.outcome.cost_usd or 0.0) + cost

    async def _plan(self, plan: PlanningStep) -> None:
        if getattr(plan, "tokens_estimated", False):
            self.outcome.tokens_estimated = True
        usage = plan.token_usage
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        self._spend(tokens_in, tokens_out)
        entry = {
            "step": self.step,
            "text": plan.plan,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
        }
        await self.runner.save_run_notes(self.run, self.outcome, plan=entry)
        await self.recorder.emit("plan", **entry)

    async def _verdict(self, verdict: Verdict) -> None:
        self._spend(verdict.tokens_in, verdict.tokens_out)
        entry = {
            "step": self.step,
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            "tokens_in": verdict.tokens_in,
            "tokens_out": verdict.tokens_out,
        }
        await self.runner.save_run_notes(self.run, self.outcome, verification=entry)
        await self.recorder.emit("verification", **entry, final=verdict.final)

    async def _finish_step(self, action: ActionStep) -> None:
        number = action.step_number
        if number in self._finished:  # smolagents yields the last step twice at max steps
            return
        self._finished.add(number)
        self.step = number
        await self._ensure_started()
        if isinstance(action.action_output, CodeForApproval):
            # Review mode: the code has not run; the run waits for the user's decision.
            # The step is recorded once it has been decided (and run).
            usage = action.token_usage
            tokens = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
            self._spend(*tokens)
            self.outcome.pause = _Pause(
                number,
                kind="approval",
                code=action.action_output.code,
                model_output=action.model_output if isinstance(action.model_output, str) else "",
                tokens_in=tokens[0],
                tokens_out=tokens[1],
            )
            return
        error = str(action.error) if action.error else None
        if error:
            await self.recorder.emit("step.error", step=number, error=error)
        if getattr(action, "tokens_estimated", False):
            self.outcome.tokens_estimated = True
        usage = action.token_usage
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        self._spend(tokens_in, tokens_out)
        carried_in, carried_out = self._carried.pop(number, (0, 0))  # spent before it waited
        tokens_in, tokens_out = tokens_in + carried_in, tokens_out + carried_out
        duration_ms = int((action.timing.duration or 0) * 1000)
        await self.runner.save_step(
            self.run,
            RunStep(
                run_id=self.run.id,
                index=number,
                thought=_thought(action.model_output),
                code=action.code_action,
                output=self._logs.get(number),
                error=error,
                duration_ms=duration_ms,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
            ),
            self.outcome,
        )
        await self.recorder.emit(
            "step.finished",
            step=number,
            duration_ms=duration_ms,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
        )
        self.step = number + 1


def _variables(
    snapshot: dict[str, Any] | None, restored: RestoreReport | None, fresh: bool
) -> prompting.Variables:
    """What the agent is told of the variables earlier questions left (see the prompt)."""
    saved = SnapshotReport.from_record(snapshot) if snapshot else SnapshotReport(changed=False)
    described = {v.name: v.describe() for v in saved.variables if v.kind != "import"}
    if not fresh:  # the same worker: everything is still there, saveable or not
        return prompting.Variables(
            defined=list(described.values()) + [u.describe() for u in saved.unsaved]
        )
    if restored is None:
        return prompting.Variables(restarted=True)
    return prompting.Variables(
        defined=[described[name] for name in restored.restored if name in described],
        lost=restored.lost,
        restarted=True,
        problem=restored.error,
    )


async def _best_effort(action: Coroutine[Any, Any, object], what: str) -> bool:
    """Await `action`; if it fails, log that we could not `what` and go on. Whether it worked."""
    try:
        await action
    except Exception:
        log.exception("could not %s", what)
        return False
    return True


class StorageFailed(Exception):
    """Object storage failed while a run stored what a step made."""


def tell_position(position: int, announced: int, seconds_since: float) -> bool:
    """Whether a queued run sends its new place in line (see QUEUE_NEAR_POSITION).

    Args:
        position: Its place now (0: granted).
        announced: The place it last sent.
        seconds_since: Seconds since it sent that.
    """
    if position == announced or position <= 0:
        return False
    return position <= QUEUE_NEAR_POSITION or seconds_since >= QUEUE_ANNOUNCE_SECONDS


def _failure_message(exc: Exception) -> str:
    """What the user reads when a run fails for a reason of the server's: which service."""
    if isinstance(exc, StorageFailed):
        return str(exc)
    if isinstance(exc, RedisError):
        return (
            "Redis (session locks and live events) stopped answering, so the run was stopped. "
            f"Ask again once it is back. ({type(exc).__name__}: {exc})"
        )
    if isinstance(exc, DBAPIError | PoolTimeout | ConnectionError):
        return (
            "The database stopped answering, so the run was stopped. Ask again once it is "
            f"back. ({type(exc).__name__}: {exc})"
        )
    return f"The run failed: {type(exc).__name__}: {exc}"


def _thought(model_output: object) -> str | None:
    if not isinstance(model_output, str):
        return None
    text = model_output.split("<code>", 1)[0].strip()
    return text.removeprefix("Thought:").strip() or None


def _answer_text(output: object) -> str:
    return output if isinstance(output, str) else str(output)

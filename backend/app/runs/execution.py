"""One run's execution, from its sandbox slot to `run.finished` (or to waiting for the user).

It waits in line if it must, builds the agent's context and the agent, runs it in a thread
of its own (AgentThread) while the translator records what it yields, and then either
parks the run (the agent asked the user: it then holds nothing) or ends it. The run
belongs to no request: a client that disconnects stops nothing.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from smolagents import LiteLLMModel

from app.agent import memory as agent_memory
from app.agent.asking import Continuation
from app.agent.build import create_agent
from app.agent.calls import CallLimits
from app.agent.checking import AnswerCheck
from app.agent.executor import SandboxExecutor, SandboxLost
from app.agent.fanout import after_error
from app.agent.model import call_limits, create_model
from app.config import Settings
from app.infra.events import RunEvent, RunEventLog
from app.infra.locks import SessionLocks
from app.infra.storage import ObjectStorage
from app.knowledge.prompt import Given
from app.knowledge.review import KnowledgeReview
from app.models import Run, RunKind, RunStatus
from app.models.base import utcnow
from app.observability import logs, metrics, tracing
from app.runs import budget, events
from app.runs.agent_thread import AgentThread
from app.runs.context import AgentContext, ContextBuilder
from app.runs.errors import BudgetExceeded
from app.runs.failures import EXPECTED, STOPPED, SUSPEND_FAILED, ended_by
from app.runs.queue_place import QUEUE_POLL_SECONDS, tell_position
from app.runs.recorder import EventRecorder
from app.runs.repair_workers import repairing
from app.runs.repository import RunRepository
from app.runs.sandboxes import SandboxPool, SlotTicket
from app.runs.state import LiveRun, LiveRuns, Outcome, Resume, RunCancelled
from app.runs.translator import StepTranslator
from app.sandbox import DEFAULT_AUTHORIZED_IMPORTS

log = logging.getLogger(__name__)

# A run's end that the database could not take is retried this often, this long.
RECORD_RETRY_INTERVAL_SECONDS = 2.0
RECORD_RETRY_SECONDS = 600.0
LOG_RETENTION_SECONDS = 3600


@dataclass
class Runtime:
    """What every run of this replica works with."""

    settings: Settings
    storage: ObjectStorage
    locks: SessionLocks
    events: RunEventLog
    sandboxes: SandboxPool
    repository: RunRepository
    context: ContextBuilder
    runs: LiveRuns
    review: KnowledgeReview

    @property
    def lock_ttl(self) -> float:
        return self.settings.SESSION_LOCK_TTL_SECONDS


async def announce_start(run: Run, recorder: EventRecorder) -> None:
    await recorder.emit(
        events.RunStarted(session_id=run.session_id, model=run.model, query=run.query)
    )


@dataclass
class Admitted:
    """A run let in (see admission): it holds the session's lock and a slot or a place in
    line, and its first events are out."""

    run: Run
    recorder: EventRecorder
    token: str  # the session lock's, held until the run ends or waits
    ticket: SlotTicket  # its sandbox slot (granted, or a place in line)
    resume: Resume | None = None  # what it goes on from, for a run that waited for the user
    attempts: int = 1  # independent attempts at the question (app.attempts when more)


class RunExecution:
    def __init__(self, rt: Runtime, live: LiveRun, admitted: Admitted):
        self.rt = rt
        self.live = live
        self.run, self.recorder = admitted.run, admitted.recorder
        self.token, self.ticket, self.resume = admitted.token, admitted.ticket, admitted.resume
        self.outcome = Outcome()
        self.knowledge: list[Given] = []  # the team's items the agent was given
        self.model_id = self.run.model  # the model its agent calls (an attempt may differ)

    async def execute(self) -> None:
        """Run it, in a span under the request that let it in (linked to the run's first
        trace when it goes on after the user's reply), its log lines marked with its ids."""
        run = self.run
        logs.for_run(run.id, run.session_id)
        attributes: dict[str, str | bool] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "workbench",
            "gen_ai.request.model": run.model,
            "gen_ai.conversation.id": str(run.session_id),
            "workbench.run.id": str(run.id),
            "workbench.run.resumed": self.resume is not None,
        }
        links = tracing.links_to(self.resume.pending if self.resume else None)
        with (
            tracing.span("invoke_agent workbench", attributes, links=links) as span,
            tracing.unrecorded_quiet(),
        ):
            await self._execute()
            if span is not None:
                span.set_attribute("workbench.run.status", str(self.outcome.status))

    async def _execute(self) -> None:
        run, live, outcome = self.run, self.live, self.outcome
        started = time.monotonic()
        keep_lock = asyncio.create_task(self._keep_lock())
        if self.resume is not None:  # the totals so far go on, and the time since it started
            outcome.tokens_in, outcome.tokens_out = run.tokens_in, run.tokens_out
            outcome.cost_usd = run.cost_usd
            if run.started_at is not None:
                started -= max(0.0, (utcnow() - run.started_at).total_seconds())
        try:
            if not self.ticket.granted.is_set():
                with tracing.span("queue"):
                    await self._wait_for_slot(announce=self.resume is None)
            metrics.QUEUE_WAIT.observe(time.monotonic() - started)
            await self._answer()
            outcome.status = RunStatus.succeeded
        except EXPECTED as exc:
            outcome.status, outcome.error = ended_by(exc, self._limits)
        except Exception as exc:
            log.exception("run %s failed", run.id)
            outcome.status, outcome.error = ended_by(exc, self._limits)
        finally:
            # Until its end is recorded or handed to _record_later, the sweeper leaves it.
            self.rt.runs.ending.add(run.id)
            self.rt.sandboxes.withdraw(self.ticket)
            self.rt.sandboxes.release(live.session_id)
            if not await self._wait_for_user(keep_lock):
                await self._end(keep_lock, started)
            self.rt.runs.ending.discard(run.id)
            live.done.set()

    def _limits(self) -> CallLimits:
        return call_limits(self.rt.settings, self.model_id)

    def _model(self) -> LiteLLMModel:
        """The model the agent calls (an attempt samples its own way: app.attempts)."""
        return create_model(self.rt.settings, self.model_id)

    async def _wait_for_slot(self, announce: bool) -> None:
        """Wait, queued, for a sandbox slot; then the run is running (and says so)."""
        ticket = self.ticket
        announced, announced_at = ticket.position, time.monotonic()
        while not await ticket.wait(QUEUE_POLL_SECONDS):
            if self.live.stop.is_set():  # cancelled here or on another replica (Sweeper)
                self.rt.sandboxes.withdraw(ticket)
                raise RunCancelled
            position = ticket.position
            if tell_position(position, announced, time.monotonic() - announced_at):
                announced, announced_at = position, time.monotonic()
                await self.recorder.emit(events.RunQueued(position=announced))
        await self.rt.repository.mark_running(self.run.id)
        if announce:
            await announce_start(self.run, self.recorder)

    async def _answer(self) -> None:
        if self.resume is None:
            await best_effort(self._announce_proposals(), f"announce proposals to {self.run.id}")
        with tracing.span("prepare"):
            context = await self.rt.context.prepare(self.run, self.recorder, self.ticket)
        self.knowledge = context.knowledge
        try:
            await self._drive(context)
        finally:
            if not self.live.stop.is_set():  # a cancelled run's worker was killed: nothing to save
                session_id = self.live.session_id
                with tracing.span("snapshot"):
                    await best_effort(
                        self.rt.context.save_snapshot(
                            self.run.id,
                            session_id,
                            context.worker,
                            context.workspace,
                            context.snapshot,
                            self.recorder,
                        ),
                        f"save the variables of session {session_id}",
                    )

    async def _announce_proposals(self) -> None:
        """What the review pass of the session's previous run proposed, at the start of this
        run's stream (that pass ran after the previous stream had ended)."""
        proposed = await self.rt.review.proposed_before(self.run)
        if proposed:
            await self.recorder.emit(events.KnowledgeProposed(items=proposed))

    async def _drive(self, context: AgentContext) -> None:
        """Run the agent in a thread of its own and record what it yields, until it ends (or
        waits for the user: then its memory is kept in `outcome.pause`)."""
        run, settings, outcome, resume = self.run, self.rt.settings, self.outcome, self.resume
        worker = context.worker
        start = (outcome.tokens_in, outcome.tokens_out, outcome.cost_usd)
        spending = budget.Spending(self.model_id, context.left, settings.LLM_PRICES, start)

        def failure(exc: BaseException) -> BaseException:
            # An interrupt past the budget ends the agent with its own error.
            if spending.exceeded is not None:
                return BudgetExceeded(spending.exceeded)
            return exc.unavailable if isinstance(exc, SandboxLost) else exc

        bridge = AgentThread(
            f"agent-{run.id}",
            self.live.stop,
            failure,
            observe=lambda item: spending.count_step(item, agent),
        )
        model = self._model()
        limits = self._limits()
        rounds = settings.AGENT_VERIFY_ROUNDS

        def spent(tokens_in: int, tokens_out: int) -> None:  # a model call that is no step
            spending.count(tokens_in, tokens_out, agent)

        check = AnswerCheck(model, run.query, rounds, bridge.on_verdict, on_tokens=spent)
        executor = SandboxExecutor(
            worker,
            on_result=bridge.on_result,
            review=context.review,
            on_output=bridge.on_output,
            answerer=context.answerer,
            review_if=(lambda: after_error(agent)) if context.review_repairs else None,
        )
        stepping = repairing(model, settings, self.rt.sandboxes, context, run, bridge, spent)
        agent = create_agent(
            model=stepping,
            limits=limits,
            executor=executor,
            system_prompt=context.prompt,
            authorized_imports=list(DEFAULT_AUTHORIZED_IMPORTS),
            max_steps=settings.AGENT_MAX_STEPS,
            planning_interval=settings.AGENT_PLANNING_INTERVAL,
            final_answer_checks=[check] if rounds else None,
        )
        stepping.agent = agent  # the fan-out reads its steps (see app.agent.fanout)
        translator = StepTranslator(
            self.rt.repository,
            self.rt.storage,
            spending,
            run,
            self.recorder,
            outcome,
            context.workspace,
        )

        def prompt_tokens() -> int:  # what the step being written was prompted with
            return limits.count(messages=[m.dict() for m in agent.write_memory_to_messages()])

        if resume is None:
            bridge.start(lambda: agent.run(run.query, stream=True, reset=True))
        else:  # the agent is built again, with its memory and the reply
            pending, reply = resume.pending, resume.reply
            step = int(pending["step"])
            steps, replay = agent_memory.resume(
                resume.memory,
                pending,
                answer=reply.answer,
                decision=reply.decision,
                code=reply.code,
                feedback=reply.feedback,
            )
            translator.step = step + 1
            if pending["kind"] == "input" and replay is not None:  # the step goes on
                goes_on = Continuation.from_json(pending.get("goes_on") or {})
                executor.resume_next = goes_on.answered(reply.answer or "")
                translator.replaying(
                    step, pending.get("tokens") or [0, 0], executor.resume_next.logs
                )
            elif pending["kind"] == "input":  # asked before steps went on (see resume)
                if pending.get("target"):
                    await asyncio.to_thread(worker.set_variables, {pending["target"]: reply.answer})
            elif replay is None:  # rejected: the model reads why, and writes new code
                await translator.rejected(step, pending, reply.feedback)
            else:  # approved (maybe edited): the step runs again from what the model wrote
                executor.approved_next = True
                translator.replaying(step, pending.get("tokens") or [0, 0])
            first = translator.step
            bridge.start(lambda: agent.continue_run(run.query, steps, first, replay))
        try:
            async for kind, payload, totals in bridge.entries(self._check):
                outcome.spent(totals)  # counted as the agent handed it over
                if kind == "item":
                    await translator.handle(payload)
                elif kind == "output":
                    await translator.printed(payload)
                else:
                    await translator.step_result(payload)
            if outcome.pause is not None:  # kept to build the agent again
                outcome.pause.memory = agent_memory.dump(agent.memory.steps)
        except BaseException:
            # Cancelled, or something here failed (a service went away): the agent must not
            # go on calling the model and running code for a run that has ended.
            await bridge.halt(agent, worker)
            stopped = sys.exc_info()[1]
            await best_effort(
                translator.keep_unfinished(
                    STOPPED if isinstance(stopped, RunCancelled) else None,
                    limits,
                    prompt_tokens,
                ),
                f"keep the unfinished step of {run.id}",
            )
            raise

    def _check(self) -> None:
        if self.live.stop.is_set():  # cancelled here or on another replica (Sweeper)
            raise RunCancelled
        if self.recorder.live_log_error is not None:
            # Redis is gone: no lock, no cancel, no live stream. The run stops (its events
            # are in the database, where streams follow them meanwhile).
            raise self.recorder.live_log_error

    async def _keep_lock(self) -> None:
        session_id, ttl = self.live.session_id, self.rt.lock_ttl
        while True:
            await asyncio.sleep(ttl / 3)
            try:
                renewed = await self.rt.locks.renew(str(session_id), self.token, ttl)
            except Exception as exc:  # Redis is down: the run's next cancel check stops it
                log.warning("could not renew the lock of session %s: %r", session_id, exc)
                continue
            if not renewed:
                log.warning("the lock of session %s was lost while a run held it", session_id)

    async def _unlock(self, what: str) -> bool:
        return await best_effort(self.rt.locks.release(str(self.live.session_id), self.token), what)

    async def _wait_for_user(self, keep_lock: asyncio.Task[None]) -> bool:
        """If the agent asked the user, store the run as waiting: it then holds nothing (no
        lock, thread, worker or connection). Whether it waits."""
        run, outcome = self.run, self.outcome
        if outcome.pause is None or outcome.status != RunStatus.succeeded:
            return False
        try:
            requested = await self._suspend()
        except Exception:
            log.exception("could not suspend %s", run.id)
            outcome.status, outcome.error = RunStatus.failed, SUSPEND_FAILED
            return False
        keep_lock.cancel()
        await self._unlock(f"unlock {run.id}")
        self.rt.runs.live.pop(run.id, None)
        # Only now is the user told: an answer given at once finds the session free.
        await best_effort(self.recorder.publish(requested), f"announce that {run.id} waits")
        return True

    async def _suspend(self) -> RunEvent:
        """Store what the run waits for, the agent's memory and the event that asks the
        user (the caller sends it live once the session's lock is free)."""
        pause = self.outcome.pause
        assert pause is not None
        status, pending, asking = pause.waiting()
        tracing.remember(pending)  # the run's next part links to this trace
        metrics.RUNS_PAUSED.inc()
        await self.rt.repository.suspend(
            self.run.id, status, pending, pause.memory, self.outcome.totals()
        )
        requested = self.recorder.prepare(asking)
        await self.recorder.flush()
        return requested

    async def _save_outcome(self) -> None:
        outcome = self.outcome
        await self.rt.repository.save_outcome(
            self.run.id,
            outcome.status,
            outcome.error,
            outcome.final_answer,
            outcome.totals(),
            knowledge=self.knowledge,
        )

    async def _end(self, keep_lock: asyncio.Task[None], started: float) -> None:
        with tracing.span("end"):
            await self._ending(keep_lock, started)
        seconds = time.monotonic() - started
        metrics.RUNS_FINISHED.labels(str(self.outcome.status)).inc()
        metrics.RUN_DURATION.labels(str(self.outcome.status)).observe(seconds)

    async def _ending(self, keep_lock: asyncio.Task[None], started: float) -> None:
        run, outcome, recorder = self.run, self.outcome, self.recorder
        # Each of these is tried even when another fails (say Redis or the database is
        # down). What the database could not take is stored once it answers again.
        recorded = await best_effort(self._save_outcome(), f"record the end of run {run.id}")
        # run.finished and every event before it are stored while the lock is still held:
        # a client that deletes the session on run.finished finds nothing left to write.
        finished = recorder.prepare(
            events.run_finished(
                outcome.status,
                outcome.error,
                outcome.tokens_in,
                outcome.tokens_out,
                outcome.cost_usd,
                int((time.monotonic() - started) * 1000),
                tokens_estimated=outcome.tokens_estimated or run.tokens_estimated,
            ),
        )
        await best_effort(recorder.flush(), f"store the events of run {run.id}")
        # The session takes questions again before anyone hears this run ended: a
        # client that asks its follow-up on run.finished must not find it busy.
        # Until its end is stored the lock stays held (and renewed): no replica's sweeper
        # may take the run for one whose process died.
        if recorded:
            keep_lock.cancel()
            await self._unlock(f"unlock after run {run.id}")
        self.rt.runs.live.pop(run.id, None)
        # The review pass is under way before anyone hears the run ended, and starts only
        # once they can: it never delays run.finished. A cell called no model: nothing to review.
        announced = asyncio.Event()
        if recorded and outcome.status == RunStatus.succeeded and run.kind != RunKind.cell:
            self.rt.review.submit(run.id, after=announced)
        try:
            await best_effort(recorder.publish(finished), f"announce the end of run {run.id}")
        finally:
            announced.set()
        await best_effort(
            self.rt.events.expire(str(run.id), LOG_RETENTION_SECONDS), f"expire run {run.id}"
        )
        if not recorded or recorder.pending:
            later = asyncio.create_task(self._record_later(keep_lock if not recorded else None))
            self.rt.runs.unrecorded[run.id] = later
            if not recorded:
                later.add_done_callback(
                    lambda _: asyncio.ensure_future(self._unlock(f"unlock after run {run.id}"))
                )

    async def _record_later(self, keep_lock: asyncio.Task[None] | None = None) -> None:
        """Store a run's end and its last events once the database answers again (the
        session's lock, if still held, is renewed meanwhile and freed afterwards)."""
        run_id = self.run.id
        deadline = time.monotonic() + RECORD_RETRY_SECONDS
        try:
            while time.monotonic() < deadline:
                await asyncio.sleep(RECORD_RETRY_INTERVAL_SECONDS)
                try:
                    await self._save_outcome()
                    await self.recorder.flush()
                except Exception as exc:
                    log.debug("run %s: its end is not recorded yet: %r", run_id, exc)
                    continue
                log.info("run %s: its end was recorded once the database answered", run_id)
                return
            log.error("run %s: its end could not be recorded; the sweeper ends it", run_id)
        finally:
            if keep_lock is not None:
                keep_lock.cancel()
            self.rt.runs.unrecorded.pop(run_id, None)


async def best_effort(action: Coroutine[Any, Any, object], what: str) -> bool:
    """Await `action`; if it fails, log that we could not `what` and go on. Whether it worked."""
    try:
        await action
    except Exception:
        log.exception("could not %s", what)
        return False
    return True

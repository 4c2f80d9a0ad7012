"""One attempt of a question: its own agent, in its own worker, on its own space.

A RunExecution of its own on the question's run: the same context (the session's files,
its variables restored from its snapshot, the prompt) with the attempt's strategy added,
the same translator recording through rows.AttemptRows/AttemptRecorder, and the run's stop
(a cancel stops every attempt). What ends it — a failure, a timeout, a budget crossed —
ends this attempt only. An attempt that answered keeps its worker and slot until the vote:
only the chosen one's variables are then written (a 200 MB state is written once, not N
times). It gives them up sooner, its variables written first, when any run waits for a
slot (the fan-out watches): siblings and other users are never starved by it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smolagents import LiteLLMModel
from sqlalchemy import select

from app.attempts import tables as key_tables
from app.attempts.rows import AttemptRecorder, AttemptRows
from app.attempts.spaces import space_id
from app.attempts.strategies import Planned, prompt_with
from app.models import RunStatus, RunStep
from app.runs import events
from app.runs.execution import Admitted, RunExecution, Runtime
from app.runs.failures import EXPECTED, ended_by
from app.runs.state import LiveRun, Outcome, RunCancelled
from app.sandbox import SandboxWorker, SnapshotReport

log = logging.getLogger(__name__)
SLOT_POLL_SECONDS = 0.25


@dataclass
class AttemptResult:
    """How an attempt went, for the vote and the run's record."""

    planned: Planned
    space: uuid.UUID
    outcome: Outcome
    status: str = RunStatus.failed.value
    error: str | None = None
    workspace: Path | None = None
    snapshot: dict[str, Any] | None = None  # the session's, it started from
    taken: tuple[SnapshotReport, int] | None = None  # its own, written into its space
    tables: dict[str, key_tables.Table] = dataclasses.field(default_factory=dict)  # its key tables

    @property
    def number(self) -> int:
        return self.planned.attempt

    @property
    def answer(self) -> str | None:
        return self.outcome.final_answer if self.status == RunStatus.succeeded else None

    def record(self) -> dict[str, Any]:
        """As the run keeps it (API.md: run.attempts)."""
        return {
            "attempt": self.number,
            "strategy": self.planned.strategy.label,
            "model": self.planned.model,
            "status": self.status,
            "answer": self.answer,
            "error": self.error,
            "tokens_in": self.outcome.tokens_in,
            "tokens_out": self.outcome.tokens_out,
            "cost_usd": self.outcome.cost_usd,
            "tables": {name: table.record() for name, table in self.tables.items()},
        }


class AttemptDriver(RunExecution):
    def __init__(
        self,
        rt: Runtime,
        live: LiveRun,
        admitted: Admitted,
        planned: Planned,
        totals: Callable[[], dict[str, Any]],
        emitting: asyncio.Lock,
    ):
        """Args:
        admitted: The question's run (its recorder and lock).
        planned: This attempt's number, strategy and model.
        totals: The run's totals, every attempt's (written with each step).
        emitting: The attempts' one lock on the run's events (rows.AttemptRecorder).
        """
        rows = AttemptRows(rt.repository, planned.attempt, totals)
        recorder = AttemptRecorder(admitted.recorder, planned.attempt, emitting)
        own = dataclasses.replace(rt, repository=rows)
        super().__init__(own, live, dataclasses.replace(admitted, recorder=recorder))
        self.model_id = planned.model
        self.result = AttemptResult(
            planned, space_id(admitted.run.id, planned.attempt), self.outcome
        )
        # An attempt that answered keeps its worker and slot until the vote, so that only
        # the chosen one's variables are written (see give_up and the fan-out's yielding).
        self._worker: SandboxWorker | None = None
        self._taking = asyncio.Lock()
        self.ready_at: float | None = None  # when its worker held the session's variables

    def _model(self) -> LiteLLMModel:
        model = super()._model()
        model.kwargs["temperature"] = self.result.planned.strategy.temperature
        return model

    async def attempt(self) -> AttemptResult:
        """Run the attempt to its end; never raises (but for the run's own cancel, which
        is kept as the attempt's status)."""
        result, run = self.result, self.run
        pool = self.rt.sandboxes
        ticket = pool.claim(result.space, run.user_id or run.session_id)
        try:
            while not await ticket.wait(SLOT_POLL_SECONDS):
                self._check()
            context = await self.rt.context.prepare(run, self.recorder, ticket, space=result.space)
            self.ready_at = time.perf_counter()
            result.workspace, result.snapshot = context.workspace, context.snapshot
            self.knowledge = context.knowledge
            context.prompt = prompt_with(context.prompt, result.planned.strategy)
            await self._drive(context)
            if self.outcome.pause is not None:
                raise AttemptAsked
            if not self.live.stop.is_set():
                result.tables = await self._tables(context.worker)
                self._worker = context.worker
            result.status = RunStatus.succeeded.value
        except AttemptAsked:
            result.status = RunStatus.failed.value
            result.error = "It asked the user a question; attempts answer on their own."
        except (RunCancelled, asyncio.CancelledError):
            result.status, result.error = RunStatus.cancelled.value, "Stopped."
        except Exception as exc:
            status, result.error = ended_by(exc, self._limits)
            result.status = status.value
            if not isinstance(exc, EXPECTED):
                log.exception("attempt %s of run %s failed", result.number, run.id)
        finally:
            pool.withdraw(ticket)
            if self._worker is None:  # else it holds its slot until the vote (give_up)
                pool.release(result.space)
        await self.recorder.emit(events.AttemptFinished(status=result.status, answer=result.answer))
        return result

    @property
    def holding(self) -> bool:
        """It answered and still holds its worker (and slot), its state not yet taken."""
        return self._worker is not None

    async def take_state(self) -> None:
        """Have its worker write its variables' snapshot into its space (result.taken),
        once: for the chosen attempt, or before its slot goes to a run that waits."""
        async with self._taking:
            worker, result = self._worker, self.result
            if worker is None or result.taken is not None or result.workspace is None:
                return
            try:
                result.taken = await self.rt.context.snapshot_in_place(
                    worker, result.workspace, result.snapshot
                )
            except Exception:
                log.exception("the state of attempt %s could not be taken", result.number)

    async def give_up(self, keep_state: bool = True) -> None:
        """Its slot goes back, its state taken first unless told not to (its worker stays
        until its space is removed)."""
        if self._worker is None:
            return
        if keep_state:
            await self.take_state()
        if self._worker is not None:
            self._worker = None
            self.rt.sandboxes.release(self.result.space)

    async def _tables(self, worker: SandboxWorker) -> dict[str, key_tables.Table]:
        """The DataFrames its code assigned, fingerprinted in its own worker (the step's own
        `_wb_` names are never saved: snapshot_format.WORKBENCH_PREFIX); what the worker
        says is checked (key_tables.parse). Nothing when the worker is gone or the step
        fails."""
        try:
            async with self.rt.repository.factory() as db:
                codes = await db.scalars(
                    select(RunStep.code)
                    .where(RunStep.run_id == self.run.id, RunStep.attempt == self.result.number)
                    .order_by(RunStep.index)
                )
                names = key_tables.assigned_names(code for code in codes if code)
            if not names or not worker.alive:
                return {}
            step = await asyncio.to_thread(worker.run, key_tables.fingerprint_code(names))
            return key_tables.parse(step.output if step.error is None else None, names)
        except Exception:
            log.warning("the tables of attempt %s could not be read", self.result.number)
            return {}


class AttemptAsked(Exception):
    """The attempt's agent asked the user: an attempt cannot wait for an answer."""

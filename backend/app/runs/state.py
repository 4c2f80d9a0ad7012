"""A run's state while a replica runs it: its handle (LiveRun), how it goes and ended
(Outcome), what it waits for (Pause), and the user's reply that resumes it (Reply, Resume)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from app.agent.asking import Continuation
from app.models import RunStatus
from app.runs.budget import Totals
from app.runs.events import (
    ApprovalReceived,
    ApprovalRequested,
    Decision,
    InputReceived,
    InputRequested,
)

# Runs that wait for the user: no replica runs them; they hold no lock, thread or worker.
WAITING = (RunStatus.waiting_input, RunStatus.waiting_approval)
# Runs that some replica runs (holding the session's lock).
RUNNING = (RunStatus.queued, RunStatus.running)
ACTIVE = RUNNING + WAITING


class RunCancelled(Exception):
    pass


@dataclass
class LiveRun:
    """A run this replica runs: how to stop it, and when it is done."""

    run_id: uuid.UUID
    session_id: uuid.UUID
    stop: threading.Event = field(default_factory=threading.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


@dataclass
class Outcome:
    status: RunStatus = RunStatus.failed
    error: str | None = None
    final_answer: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    # Some of its tokens were counted here, not by the model's server.
    tokens_estimated: bool = False
    pause: Pause | None = None  # the agent asked the user: the run waits

    def spent(self, totals: Totals) -> None:
        """The run's totals as the model calls' count handed them (see budget.Spending)."""
        self.tokens_in, self.tokens_out, self.cost_usd = totals

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
class Pause:
    """What a step waits for (an answer, or approval of its code), and what is kept to go
    on once the user replies."""

    step: int
    kind: str = "input"  # or "approval"
    question: str = ""
    code: str = ""  # the step's code (waiting for approval, or the code that asked)
    model_output: str = ""  # what the model wrote for that step (replayed once replied to)
    goes_on: Continuation | None = None  # where a step that asked goes on once answered
    tokens_in: int = 0
    tokens_out: int = 0
    memory: list[dict[str, Any]] = field(default_factory=list)

    def waiting(self) -> tuple[RunStatus, dict[str, Any], InputRequested | ApprovalRequested]:
        """The run's status while it waits, what it stores as pending, and the event that
        asks the user."""
        asking: InputRequested | ApprovalRequested
        pending: dict[str, Any] = {"model_output": self.model_output}
        pending["tokens"] = [self.tokens_in, self.tokens_out]
        if self.kind == "input":
            pending["question"] = self.question
            if self.goes_on is not None:
                pending["goes_on"] = self.goes_on.to_json()
            status = RunStatus.waiting_input
            asking = InputRequested(step=self.step, question=self.question)
        else:
            pending["code"] = self.code
            status = RunStatus.waiting_approval
            asking = ApprovalRequested(step=self.step, code=self.code)
        return status, {"kind": self.kind, "step": self.step, **pending}, asking


@dataclass(frozen=True)
class Reply:
    """The user's reply to a waiting run: an answer, or a decision on its code."""

    answer: str | None = None
    decision: Decision | None = None
    code: str | None = None
    feedback: str | None = None
    by: uuid.UUID | None = None  # who replied

    @property
    def waits_for(self) -> RunStatus:
        return RunStatus.waiting_input if self.answer is not None else RunStatus.waiting_approval

    def note(self, pending: dict[str, Any]) -> InputReceived | ApprovalReceived:
        """The event that says it was received (its data is what the run records of it)."""
        step = int(pending["step"])
        if self.answer is not None:
            return InputReceived(step=step, question=pending["question"], answer=self.answer)
        told: dict[str, Any] = {}
        if self.decision == "edit":
            told["code"] = self.code
        if self.feedback:
            told["feedback"] = self.feedback
        assert self.decision is not None
        return ApprovalReceived(step=step, decision=self.decision, **told)


@dataclass(frozen=True)
class Resume:
    """A run that waited goes on: its stored memory, what it waited for, and the reply."""

    memory: list[dict[str, Any]]
    pending: dict[str, Any]
    reply: Reply


@dataclass
class LiveRuns:
    """The runs of this replica: those it runs, and those whose end it is recording."""

    live: dict[uuid.UUID, LiveRun] = field(default_factory=dict)
    ending: set[uuid.UUID] = field(default_factory=set)  # between their end and its record
    # Ended runs whose end the database has not taken yet (it was down).
    unrecorded: dict[uuid.UUID, asyncio.Task[None]] = field(default_factory=dict)

    def here(self, run_id: uuid.UUID) -> bool:
        """Whether this replica runs the run, or is recording its end."""
        return run_id in self.live or run_id in self.ending or run_id in self.unrecorded

"""One check asked as a real question: through the same admission as POST
/sessions/{id}/query, in the check run's session, with nobody watching (the agent's questions
are answered as `workbench eval` answers them, code in review is approved), waited for by
following the run's events (no database connection or thread is held meanwhile), and
scored as `workbench eval` scores an answer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.cli.eval_dabench import Match, Task, prompt, score
from app.cli.eval_runner import AUTO_ANSWER
from app.errors import AppError, ServiceUnavailable
from app.models import Run, RunStatus, Session
from app.runs.errors import AnalysisDisabled, BudgetExceeded, SessionBusy
from app.runs.orchestrator import RunOrchestrator
from app.runs.schemas import QueryRequest

log = logging.getLogger(__name__)

FINISHED = (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)
# "Not now" rather than "no": the session still closing its last run, no sandbox for a
# while, a backing service down. The check waits and asks again, this many times.
NOT_NOW = (SessionBusy, AnalysisDisabled, ServiceUnavailable)
RETRIES = 12
FIRST_WAIT, LONGEST_WAIT = 0.25, 30.0
# Between two reads of a run's events that ended before the run did (it waited, then went on).
FOLLOW_AGAIN_SECONDS = 0.5
# Matching as `workbench eval` does by default.
MATCH = Match.rounded


class Stop(Exception):
    """The check run cannot go on (the project's budget is spent): the sentence says why."""


@dataclass
class Outcome:
    status: str  # passed | failed | error
    run_id: uuid.UUID | None = None
    answer: str | None = None
    detail: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None


def task_of(position: int, question: str, expected: dict[str, str], format: str) -> Task:
    """A check as a task of the eval harness (so its prompt and scoring are the harness's)."""
    return Task(id=str(position), question=question, answers=tuple(expected.items()), format=format)


def query_of(task: Task, model: str, attempts: int) -> QueryRequest:
    fields: dict[str, object] = {"query": prompt(task), "model": model}
    if "attempts" in QueryRequest.model_fields:  # where questions take attempts
        fields["attempts"] = attempts
    return QueryRequest.model_validate(fields)


def judged(task: Task, run: Run) -> Outcome:
    """The run's answer scored against the check's expected values."""
    answer = run.final_answer

    def outcome(status: str, detail: str | None) -> Outcome:
        return Outcome(status, run.id, answer, detail, run.tokens_in, run.tokens_out, run.cost_usd)

    if run.status != RunStatus.succeeded:
        return outcome("error", run.error or f"The run ended {run.status}.")
    result = score(task, answer, MATCH)
    if result.correct:
        return outcome("passed", None)
    wrong = [
        f"@{name}: {'nothing' if result.given[name] is None else result.given[name]} given, "
        f"{value} expected"
        for name, value in task.answers
        if not result.correctness[name]
    ]
    return outcome("failed", "; ".join(wrong))


class Asker:
    def __init__(self, runs: RunOrchestrator, factory: async_sessionmaker[AsyncSession]):
        self.runs = runs
        self.factory = factory

    async def start(
        self, session_id: uuid.UUID, query: QueryRequest, asker: tuple[uuid.UUID, str]
    ) -> Run | Outcome:
        """The run that asks it, or an error outcome when the question was refused.

        Raises:
            Stop: the project's budget is spent.
        """
        for tries in range(1, RETRIES + 1):
            async with self.factory() as db:
                session = await db.get(Session, session_id)
            if session is None:
                raise Stop("The check run's session was deleted, so its checks cannot be asked.")
            try:
                return await self.runs.start(session, query, asker)
            except BudgetExceeded as exc:
                raise Stop(exc.detail) from None
            except NOT_NOW as exc:
                if tries == RETRIES:
                    return Outcome(
                        "error", detail=f"Not asked, the server stayed busy: {exc.detail}"
                    )
                await asyncio.sleep(min(FIRST_WAIT * 2 ** (tries - 1), LONGEST_WAIT))
            except AppError as exc:
                return Outcome("error", detail=exc.detail)
        raise AssertionError("unreachable")

    async def wait(self, run_id: uuid.UUID) -> Run:
        """The run once it ended, attending to what it asks on the way."""
        seq = 0
        while True:
            async for event in self.runs.follow(run_id, seq):
                if event is None:
                    continue
                seq = max(seq, event.seq)
                await self._attend(run_id, event.event)
            async with self.factory() as db:
                run = await db.get(Run, run_id)
            if run is None:
                raise Stop("A check's run was deleted (with its session?) before it ended.")
            if run.status in FINISHED:
                return run
            await asyncio.sleep(FOLLOW_AGAIN_SECONDS)

    async def _attend(self, run_id: uuid.UUID, event: str) -> None:
        """Nobody watches a check run: answer the agent's questions, approve its code."""
        with contextlib.suppress(AppError):  # answered already, or the run ended meanwhile
            if event == "input.requested":
                await self.runs.answer(run_id, AUTO_ANSWER)
            elif event == "approval.requested":
                await self.runs.decide(run_id, "approve", None, None)

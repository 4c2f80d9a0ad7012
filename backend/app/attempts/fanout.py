"""A question asked with several attempts: they run at once, each its own agent in its
own worker (driver), then the vote (vote, and the judge when no group holds a majority),
the verdict, and the chosen attempt's state kept (choose).

The run holds the session's lock as any run does (the session is busy); the session's own
worker is not used (its slot goes back at once, for the attempts or anyone else). The
run's totals are every attempt's, and the judge's. One attempt failing or timing out
ends that attempt only; a cancel ends them all; the run fails only when none answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from sqlalchemy import select

from app.agent.model import create_model, step_cost
from app.attempts import choose, dissent, strategies
from app.attempts.driver import SLOT_POLL_SECONDS, AttemptDriver, AttemptResult
from app.attempts.judge import Shown, judge
from app.attempts.vote import Group, Tally, apart_by, tally
from app.models import RunStep
from app.observability import metrics
from app.runs import events
from app.runs.execution import Admitted, RunExecution, Runtime, best_effort
from app.runs.state import LiveRun, RunCancelled

log = logging.getLogger(__name__)


class NoAttemptAnswered(Exception):
    """Every attempt failed (their errors say why)."""


class AttemptsExecution(RunExecution):
    def __init__(self, rt: Runtime, live: LiveRun, admitted: Admitted):
        super().__init__(rt, live, admitted)
        planned = strategies.plan(admitted.attempts, self.run.model, rt.settings.llm_models)
        emitting = asyncio.Lock()
        self.drivers = [
            AttemptDriver(rt, live, admitted, p, self._run_totals, emitting) for p in planned
        ]
        self.judged = (0, 0, 0.0)  # the judge's tokens in, out and cost

    def _run_totals(self) -> dict[str, Any]:
        tokens_in = sum(d.outcome.tokens_in for d in self.drivers) + self.judged[0]
        tokens_out = sum(d.outcome.tokens_out for d in self.drivers) + self.judged[1]
        costs = [d.outcome.cost_usd for d in self.drivers if d.outcome.cost_usd is not None]
        cost = sum(costs) + self.judged[2] if costs or self.judged[2] else None
        totals: dict[str, Any] = {
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "cost_usd": cost,
        }
        if any(d.outcome.tokens_estimated for d in self.drivers):
            totals["tokens_estimated"] = True
        return totals

    async def _answer(self) -> None:
        await best_effort(self._announce_proposals(), f"announce proposals to {self.run.id}")
        self.rt.sandboxes.release(self.live.session_id)  # the attempts have their own
        for driver in self.drivers:
            planned = driver.result.planned
            await self.recorder.emit(
                events.AttemptStarted(
                    attempt=planned.attempt, strategy=planned.strategy.label, model=planned.model
                )
            )
        results: list[AttemptResult] = []
        started = time.perf_counter()
        decided = asyncio.Event()
        yielding = asyncio.create_task(self._yield_slots(decided))
        try:
            results = list(await asyncio.gather(*(d.attempt() for d in self.drivers)))
            self.knowledge = next((d.knowledge for d in self.drivers if d.knowledge), [])
            ready = [d.ready_at for d in self.drivers]
            if all(at is not None for at in ready):  # every one started from the state
                forked = max(at for at in ready if at is not None) - started
                metrics.SNAPSHOT_SECONDS.labels("fork").observe(forked)
            self._count()
            if self.live.stop.is_set():
                raise RunCancelled
            await self._decide(results)
        finally:
            decided.set()
            await yielding
            self._count()
            for driver in self.drivers:
                await driver.give_up(keep_state=False)
            await choose.discard(self.rt, [d.result for d in self.drivers])

    async def _yield_slots(self, decided: asyncio.Event) -> None:
        """Until the vote is done: when any run waits for a worker slot (a sibling attempt
        or another user's question), the attempts that answered give theirs up, their
        variables written first (they may be chosen)."""
        while not decided.is_set():
            if self.rt.sandboxes.queued:
                for driver in self.drivers:
                    if driver.holding:
                        await best_effort(driver.give_up(), f"yield attempt {driver.result.number}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(decided.wait(), SLOT_POLL_SECONDS)

    def _count(self) -> None:
        totals = self._run_totals()
        outcome = self.outcome
        outcome.tokens_in, outcome.tokens_out = totals["tokens_in"], totals["tokens_out"]
        outcome.cost_usd = totals["cost_usd"]
        outcome.tokens_estimated = bool(totals.get("tokens_estimated"))

    async def _decide(self, results: list[AttemptResult]) -> None:
        answered = [(r.number, r.answer) for r in results if r.answer is not None]
        found = tally(answered, len(results), {r.number: r.tables for r in results})
        verdict = await self._verdict(found, results)
        await choose.keep(self.rt, self.run.id, results, verdict)
        chosen_number = verdict["chosen"]
        public = {k: v for k, v in verdict.items() if k != "judgements"}
        await self.recorder.emit(events.VerdictEvent(**public))
        if chosen_number is None:
            errors = "; ".join(f"attempt {r.number}: {r.error}" for r in results if r.error)
            raise NoAttemptAnswered(f"No attempt answered ({errors}).")
        driver = next(d for d in self.drivers if d.result.number == chosen_number)
        chosen = driver.result
        await driver.take_state()
        await choose.adopt(self.rt, self.run, chosen)
        self.outcome.final_answer = chosen.answer
        await self.recorder.emit(events.Final(answer=chosen.answer or "", attempt=chosen.number))

    async def _verdict(self, found: Tally, results: list[AttemptResult]) -> dict[str, Any]:
        by_number = {r.number: r for r in results}
        groups = [{"answer": g.answer, "attempts": g.attempts} for g in found.groups]
        verdict: dict[str, Any] = {"agreement": found.agreement, "groups": groups}
        largest = found.largest
        failed = [r for r in results if r.answer is None]
        if largest is None:
            return {**verdict, "outcome": "undecided", "chosen": None, "reason": _none(failed)}
        outcome = found.outcome
        if outcome is not None:
            why = await self._explain(found, by_number) if outcome == "majority" else {}
            reason = _agreed(found, by_number, failed, why)
            return {**verdict, "outcome": outcome, "chosen": largest.attempts[0], "reason": reason}
        if len(found.groups) == 1:  # one answer, but the others failed: no majority
            reason = (
                f"Only {_names(largest.attempts)} answered ({len(largest.attempts)} of "
                f"{found.total}); {_failures(failed)}"
            )
            return {
                **verdict,
                "outcome": "undecided",
                "chosen": largest.attempts[0],
                "reason": reason,
            }
        picked, judgements = await self._judge(found, by_number)
        reasons = " ".join(
            f"{j.first} vs {j.second}: "
            + (f"attempt {j.pick}" if j.pick else "cannot tell")
            + f" — {j.reason}"
            for j in judgements
        )
        if picked is None:
            outcome, chosen = "undecided", largest.attempts[0]
            reason = f"No majority ({found.agreement}) and the judge could not tell. {reasons}"
        else:
            outcome, chosen = "judged", picked
            reason = (
                f"No majority ({found.agreement}); the judge picked attempt {picked}. {reasons}"
            )
        return {
            **verdict,
            "outcome": outcome,
            "chosen": chosen,
            "reason": reason.strip(),
            "judgements": [j.record() for j in judgements],
        }

    async def _judge(
        self, found: Tally, by_number: dict[int, AttemptResult]
    ) -> tuple[int | None, list[Any]]:
        shown = [await self._shown(by_number[g.attempts[0]]) for g in found.groups]
        model = create_model(self.rt.settings, self.run.model)
        try:
            return await judge(model, self.run.query, shown, self._spent)
        except Exception as exc:  # the provider failed: the vote stands undecided
            log.warning("the judge of run %s failed: %r", self.run.id, exc)
            return None, []

    async def _explain(self, found: Tally, by_number: dict[int, AttemptResult]) -> dict[int, str]:
        """Why each dissenting group differs from the majority, in a clause (by the group's
        first attempt); empty when the model fails (the reason is then the vote's text)."""
        largest = found.largest
        assert largest is not None
        majority = await self._shown(by_number[largest.attempts[0]])
        dissents = [await self._shown(by_number[g.attempts[0]]) for g in found.groups[1:]]
        model = create_model(self.rt.settings, self.run.model)
        try:
            return await dissent.explain(model, self.run.query, majority, dissents, self._spent)
        except Exception as exc:
            log.warning("explaining the dissent of run %s failed: %r", self.run.id, exc)
            return {}

    def _spent(self, tokens_in: int, tokens_out: int) -> None:
        """The judge's or the explainer's tokens, counted in the run's totals."""
        cost = step_cost(self.run.model, tokens_in, tokens_out, self.rt.settings.LLM_PRICES)
        done_in, done_out, done_cost = self.judged
        self.judged = (done_in + tokens_in, done_out + tokens_out, done_cost + (cost or 0.0))

    async def _shown(self, result: AttemptResult) -> Shown:
        async with self.rt.repository.factory() as db:
            rows = (
                await db.execute(
                    select(RunStep.code, RunStep.output)
                    .where(RunStep.run_id == self.run.id, RunStep.attempt == result.number)
                    .order_by(RunStep.index)
                )
            ).all()
        return Shown(
            result.number,
            result.planned.strategy.label,
            "\n\n".join(code for code, _ in rows if code),
            "\n".join(output for _, output in rows if output),
            result.answer or "",
        )


def _names(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"attempt {numbers[0]}"
    return "attempts " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}"


def _failures(failed: list[AttemptResult]) -> str:
    if not failed:
        return ""
    return " ".join(f"Attempt {r.number} did not answer: {r.error or r.status}." for r in failed)


def _none(failed: list[AttemptResult]) -> str:
    return f"No attempt answered. {_failures(failed)}".strip()


def _agreed(
    found: Tally,
    by_number: dict[int, AttemptResult],
    failed: list[AttemptResult],
    why: dict[int, str],
) -> str:
    largest = found.largest
    assert largest is not None
    agreeing = len(largest.attempts)
    if agreeing == found.total:
        return f"{agreeing} of {found.total} attempts agree."
    dissents = [_dissent(largest, g, by_number, why) for g in found.groups[1:]]
    said = f"{agreeing} of {found.total} agree — " + "; ".join(dissents)
    if failed:
        said += ("; " if dissents else "") + _failures(failed)
    return said.rstrip(".; ") + "."


def _dissent(
    largest: Group, group: Group, by_number: dict[int, AttemptResult], why: dict[int, str]
) -> str:
    """ "attempt 3 (sql) found 4,812 because it kept refunded orders"; for an answer that
    agrees, the table that kept it apart: "found the same answer from a different
    `by_region`"."""
    first = by_number[group.attempts[0]]
    said = f"{_names(group.attempts)} ({first.planned.strategy.label}) found "
    chosen = by_number[largest.attempts[0]]
    table = apart_by((largest.answer, chosen.tables), (group.answer, first.tables))
    if table is not None:
        said += f"the same answer from a different `{table}`"
    else:
        said += _short(group.answer)
    if group.attempts[0] in why:
        said = f"{said.rstrip('.;: ')} because {why[group.attempts[0]]}"
    return said


def _short(answer: str, limit: int = 160) -> str:
    answer = " ".join(answer.split())
    return answer if len(answer) <= limit else answer[: limit - 1] + "…"

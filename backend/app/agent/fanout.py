"""Parallel repair: when a step fails twice in a row, repair strategies run at once.

Each strategy asks the model for the failed step with its own instruction (re-read the
data's real columns and types, a simpler method, a different library) and runs the code in
a sandbox worker of its own, started from the run's variables (a snapshot of the run's
worker restored into a copy of its workspace: see app.runs.repair_workers). The first whose
code runs without an error and that the critic accepts wins; the others stop (their running
code is killed) and their workers are dropped. The winner's reply becomes the run's next
step: the run's own worker runs its code again (so nothing a strategy did reaches the run
except the chosen code, run where the run's state is), and that step is recorded, streamed,
and — with autonomy `review_repairs` — waits for approval like any step in review.

`RepairingModel` wraps the agent's model: before a step's model call it checks whether the
last two steps failed and, if so, answers the call with the winner's reply instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Protocol

from smolagents.local_python_executor import fix_final_answer_code
from smolagents.memory import ActionStep
from smolagents.models import ChatMessage, ChatMessageStreamDelta, MessageRole
from smolagents.monitoring import TokenUsage

from app.agent import prompting, repair
from app.agent.checking import parse_verdict
from app.sandbox import DataAnswerer, SandboxWorker

log = logging.getLogger(__name__)

REASON_CHARS = 300
STOPPED = "stopped: another strategy continued the run, or the run ended"
# How often a fan-out looks whether its run has ended meanwhile.
POLL_SECONDS = 0.25
_STOPS = ["Observation:", "Calling tools:", repair.CODE_CLOSE]


@dataclass(frozen=True)
class Strategy:
    label: str
    instruction: str


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "re-read the data's real columns and types",
        "Print the real column names, dtypes and a few rows of the data the step uses, and "
        "write the step against what they show, not against what you assumed.",
    ),
    Strategy(
        "a simpler method",
        "Do the step the plainest way: simple pandas operations one at a time, nothing the "
        "question does not need.",
    ),
    Strategy(
        "a different library",
        "Do the step with another library or approach than the one that failed: numpy or "
        "plain Python instead of pandas, DuckDB SQL instead of pandas, or the other way round.",
    ),
)


@dataclass(frozen=True)
class RepairDone:
    """What a fan-out did (the `repair` event): `chosen` is 1-based, None when none worked."""

    step: int
    strategies: list[str]
    chosen: int | None
    reasons: list[str]


class StrategyWorkers(Protocol):
    """Workers for the strategies, each started from the run's variables."""

    def fork(self, count: int) -> list[SandboxWorker]:
        """Up to `count` started workers (fewer when the sandbox pool has no room)."""
        ...

    def drop(self, workers: Sequence[SandboxWorker]) -> None:
        """Stop them and remove their workspaces."""
        ...


@dataclass
class _Tried:
    reply: str | None = None  # the reply in the expected form, when its code ran and passed
    reason: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    winner_tokens: tuple[int, int] = (0, 0)  # the model call that wrote the reply


class RepairFanOut:
    """Runs the strategies for one run (one instance a run; used in the agent's thread)."""

    def __init__(
        self,
        *,
        strategies: int,
        make_model: Callable[[], Any],
        workers: StrategyWorkers,
        question: str,
        on_done: Callable[[RepairDone], None],
        on_tokens: Callable[[int, int], None],
        answerer: DataAnswerer | None = None,
    ):
        """Args:
        strategies: How many to run at most (REPAIR_STRATEGIES; 0: never fan out).
        make_model: A model of the run's (one each: a model's client is not thread-safe).
        workers: Where the strategies' workers come from.
        question: The run's question (the critic reads it).
        on_done: Told what each fan-out did.
        on_tokens: Counts the tokens of calls that are no step of the run's (the losers'
            and the critic's); the winner's call is counted with the step it becomes.
        answerer: Answers the code's `sql()` queries, as in the run's own steps.
        """
        self.strategies = min(strategies, len(STRATEGIES))
        self.make_model = make_model
        self.workers = workers
        self.question = question
        self.on_done = on_done
        self.on_tokens = on_tokens
        self.answerer = answerer
        self._last = 0  # the step the last fan-out was for

    def wanted(self, agent: Any) -> list[ActionStep] | None:
        """The two failed steps that call for a fan-out before the agent's next step, if
        the last two ran code that failed, neither before the last fan-out, and a step is
        left. A reply with no code is no failing approach to repair: the model is told it
        wrote none, as before (strategies would only ask it again)."""
        if not self.strategies or agent.step_number > agent.max_steps:
            return None
        actions = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
        failed = actions[-2:]
        if len(failed) < 2 or any(s.error is None or not s.code_action for s in failed):
            return None
        if any(s.step_number <= self._last for s in failed):
            return None
        return failed

    def repair(self, agent: Any, messages: list[ChatMessage]) -> tuple[str, TokenUsage] | None:
        """Run the strategies for the agent's next step, if it calls for them.

        Returns:
            The winner's reply and what its model call cost, or None (no fan-out, or no
            strategy worked: the step goes on as usual).
        """
        failed = self.wanted(agent)
        if failed is None:
            return None
        step = agent.step_number
        self._last = step
        # Never more strategies than steps left (the winner's step is the next one).
        count = min(self.strategies, agent.max_steps - step + 1)
        try:
            workers = self.workers.fork(count)
        except Exception:
            log.exception("step %s: no workers for the repair strategies", step)
            return None
        if not workers:
            log.info("step %s: no room in the sandbox pool for repair strategies", step)
            return None
        chosen, tried = self._race(agent, workers, messages, failed)
        labels = [s.label for s in STRATEGIES[: len(workers)]]
        for i, result in enumerate(tried):
            if i != chosen and (result.tokens_in or result.tokens_out):
                self.on_tokens(result.tokens_in, result.tokens_out)
        if chosen is not None:
            winner = tried[chosen]
            extra = (
                winner.tokens_in - winner.winner_tokens[0],
                winner.tokens_out - winner.winner_tokens[1],
            )
            if any(extra):  # the critic's look at the winner
                self.on_tokens(*extra)
        reasons = ["" if i == chosen else r.reason for i, r in enumerate(tried)]
        self.on_done(RepairDone(step, labels, None if chosen is None else chosen + 1, reasons))
        if chosen is None:
            return None
        reply = tried[chosen].reply
        assert reply is not None
        return reply, TokenUsage(*tried[chosen].winner_tokens)

    def _race(
        self,
        agent: Any,
        workers: list[SandboxWorker],
        messages: list[ChatMessage],
        failed: list[ActionStep],
    ) -> tuple[int | None, list[_Tried]]:
        """The strategies at once; the first that works stops the rest, and so does the
        run's end (cancelled, or past its budget: `agent.interrupt()`)."""
        stop = threading.Event()
        tried = [_Tried(reason=STOPPED) for _ in workers]
        chosen: int | None = None
        pool = ThreadPoolExecutor(len(workers), thread_name_prefix=f"repair-{agent.step_number}")
        try:
            futures = {
                pool.submit(self._try, STRATEGIES[i], w, messages, failed, stop): i
                for i, w in enumerate(workers)
            }
            pending = set(futures)
            while pending:
                done, pending = wait(pending, POLL_SECONDS, FIRST_COMPLETED)
                if agent.interrupt_switch and not stop.is_set():  # the run ends
                    stop.set()
                    for worker in workers:
                        worker.kill()
                for future in done:
                    i = futures[future]
                    tried[i] = future.result()
                    if chosen is None and tried[i].reply is not None and not stop.is_set():
                        chosen = i
                        stop.set()
                        for j, other in enumerate(workers):
                            if j != i:
                                other.kill()  # its running code stops now
        finally:
            pool.shutdown(wait=True)
            self.workers.drop(workers)
        return chosen, tried

    def _try(
        self,
        strategy: Strategy,
        worker: SandboxWorker,
        messages: list[ChatMessage],
        failed: list[ActionStep],
        stop: threading.Event,
    ) -> _Tried:
        tried = _Tried()
        model = self.make_model()
        ask = prompting.render_repair_strategy(strategy.label, strategy.instruction)
        prompt = [*messages, _user(ask)]
        try:
            answer = model.generate(prompt, stop_sequences=_STOPS)
        except Exception as exc:
            tried.reason = _short(f"the model failed: {exc}")
            return tried
        usage = answer.token_usage
        tried.winner_tokens = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        tried.tokens_in, tried.tokens_out = tried.winner_tokens
        text = answer.content if isinstance(answer.content, str) else None
        try:
            reply = repair.read_reply(text)
        except repair.UnreadableReply:
            tried.reason = "the model wrote no code"
            return tried
        if stop.is_set():
            tried.reason = STOPPED
            return tried
        code = fix_final_answer_code(reply.code)
        try:
            result = worker.run(code, answerer=self.answerer)
        except Exception as exc:
            tried.reason = _short(f"its worker failed: {exc}")
            return tried
        if stop.is_set():
            tried.reason = STOPPED
            return tried
        if result.error is not None:
            tried.reason = _short(f"its code failed: {_last_line(result.error)}")
            return tried
        if result.question is not None:
            tried.reason = "its code asked the user a question"
            return tried
        verdict, reason = self._critic(model, failed, strategy, code, result.output, tried)
        if verdict != "approve":
            tried.reason = _short(f"the check rejected it: {reason}")
            return tried
        tried.reply = repair.Reply(reply.thought, reply.code).as_expected()
        return tried

    def _critic(
        self,
        model: Any,
        failed: list[ActionStep],
        strategy: Strategy,
        code: str,
        output: Any,
        tried: _Tried,
    ) -> tuple[str, str]:
        shown = [
            prompting.CheckedStep(s.step_number, s.code_action or "", "", str(s.error))
            for s in failed
        ]
        repaired = prompting.CheckedStep(0, code, "" if output is None else str(output))
        prompt = prompting.render_repair_check(self.question, shown, strategy.label, repaired)
        try:
            answer = model.generate([_user(prompt)])
        except Exception as exc:
            return "revise", f"the check could not be made: {exc}"
        usage = answer.token_usage
        if usage:
            tried.tokens_in += usage.input_tokens
            tried.tokens_out += usage.output_tokens
        return parse_verdict(answer.content if isinstance(answer.content, str) else "")


class RepairingModel:
    """The agent's model, whose step calls go to a repair fan-out first (see the module)."""

    def __init__(self, model: Any, fanout: RepairFanOut):
        self._model = model
        self.fanout = fanout
        self.agent: Any = None  # set once the agent is built

    def generate_stream(self, messages: list[ChatMessage], *args: Any, **kwargs: Any) -> Any:
        stops = kwargs.get("stop_sequences") or []
        if self.agent is not None and repair.CODE_CLOSE in stops:  # a step, not a plan
            repaired = self.fanout.repair(self.agent, messages)
            if repaired is not None:
                text, usage = repaired
                return _once(ChatMessageStreamDelta(content=text, token_usage=usage))
        return self._model.generate_stream(messages, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def _once(delta: ChatMessageStreamDelta) -> Iterator[ChatMessageStreamDelta]:
    yield delta


def _user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": text}])


def _last_line(error: str) -> str:
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return lines[-1] if lines else error


def _short(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def after_error(agent: Any) -> bool:
    """Whether the agent's last step failed: its next code is a repair (a retry after an
    error, or a fan-out's winner), which autonomy `review_repairs` asks approval for."""
    last = next((s for s in reversed(agent.memory.steps) if isinstance(s, ActionStep)), None)
    return last is not None and last.error is not None

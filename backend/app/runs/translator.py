"""Turning what the agent yields (and what the sandbox reports) into a run's events and rows.

Depends on the repository and the recorder only: the run's execution hands it each item.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from smolagents.agents import ActionStep, FinalAnswerStep, PlanningStep
from smolagents.memory import ToolCall
from smolagents.models import ChatMessageStreamDelta

from app.agent.asking import AskedUser
from app.agent.build import PlanDelta
from app.agent.calls import CallLimits
from app.agent.checking import Verdict
from app.agent.fanout import RepairDone
from app.infra.storage import ObjectStorage
from app.models import Artifact, Run, RunStep
from app.observability import tracing
from app.runs import events
from app.runs.budget import Spending
from app.runs.failures import StorageFailed
from app.runs.recorder import EventRecorder
from app.runs.repository import RunRepository
from app.runs.schemas import ArtifactOut, QueryOut
from app.runs.state import Outcome, Pause
from app.runs.workspace import upload
from app.sandbox import (
    BOOKKEEPING_DIR,
    ArtifactFile,
    CodeForApproval,
    StepResult,
    UserQuestion,
    hostfs,
)

OUTPUT_EVENT_CHARS = 20_000


class StepTranslator:
    """Turns what smolagents yields (and what the sandbox reports) into events and rows.

    The run's totals come counted with each item (budget.Spending); only the tokens of a
    step the run stopped in are counted here (estimated: the server never said).
    """

    def __init__(
        self,
        repository: RunRepository,
        storage: ObjectStorage,
        spending: Spending,
        run: Run,
        recorder: EventRecorder,
        outcome: Outcome,
        workspace: Path,
    ):
        self.workspace = workspace
        self.repository = repository
        self.storage = storage
        self.spending = spending
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
        self._printing: dict[int, str] = {}  # what the running step printed, sent already
        self._queries: dict[int, list[QueryOut]] = {}  # what each step ran on data sources
        self._streamed: dict[int, str] = {}  # what the model wrote of each step so far
        self._code: dict[int, str] = {}  # each step's code, as run
        self._read: set[str] = set()  # the files recorded as read by this run's steps so far

    def replaying(self, step: int, tokens: list[int], logs: str = "") -> None:
        """`step` runs again from what the model wrote (its code approved, or its question
        answered); `logs`: what it printed before it asked."""
        self.step = step
        self._replayed = step
        self._started.add(step)
        self._carried[step] = (int(tokens[0]), int(tokens[1]))
        if logs:
            self._logs[step] = logs

    async def rejected(self, step: int, pending: dict[str, Any], feedback: str | None) -> None:
        """Record the step whose code the user rejected (it did not run)."""
        tokens_in, tokens_out = (int(t) for t in pending.get("tokens") or [0, 0])
        error = "Rejected by the user" + (f": {feedback}" if feedback else ".")
        await self.repository.add_step(
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
            self.outcome.totals(),
        )
        await self.recorder.emit(
            events.StepFinished(
                step=step, duration_ms=0, tokens_in=tokens_in, tokens_out=tokens_out
            )
        )

    async def _ensure_started(self) -> None:
        if self.step not in self._started:
            self._started.add(self.step)
            await self.recorder.emit(events.StepStarted(step=self.step))

    async def handle(self, item: object) -> None:
        if isinstance(item, PlanDelta):
            if item.content:
                await self.recorder.emit(events.PlanDelta(step=self.step, text=item.content))
        elif isinstance(item, PlanningStep):
            await self._plan(item)
        elif isinstance(item, Verdict):
            await self._verdict(item)
        elif isinstance(item, RepairDone):
            await self.recorder.emit(
                events.Repair(
                    step=item.step,
                    strategies=item.strategies,
                    chosen=item.chosen,
                    reasons=item.reasons,
                )
            )
        elif isinstance(item, ChatMessageStreamDelta):
            if item.content and self.step != self._replayed:
                await self._ensure_started()
                self._streamed[self.step] = self._streamed.get(self.step, "") + item.content
                await self.recorder.emit(events.ModelDelta(step=self.step, text=item.content))
        elif isinstance(item, ToolCall):
            await self._ensure_started()
            self._code[self.step] = str(item.arguments)
            await self.recorder.emit(events.StepCode(step=self.step, code=str(item.arguments)))
        elif isinstance(item, ActionStep):
            await self._finish_step(item)
        elif isinstance(item, FinalAnswerStep):
            if isinstance(item.output, UserQuestion | CodeForApproval):  # see _finish_step
                return
            self.outcome.final_answer = _answer_text(item.output)
            await self.recorder.emit(events.Final(answer=self.outcome.final_answer))

    async def printed(self, text: str) -> None:
        """What the running step printed so far, sent at once (its result has all of it)."""
        await self._ensure_started()
        self._printing[self.step] = self._printing.get(self.step, "") + text
        await self.recorder.emit(events.StepOutput(step=self.step, output=text))

    async def step_result(self, result: StepResult) -> None:
        await self._ensure_started()
        sent = self._printing.pop(self.step, "")
        if result.logs:
            # A step that goes on after the user's answer printed some before it asked.
            self._logs[self.step] = self._logs.get(self.step, "") + result.logs
            rest = _unsent(result.logs, sent)
            if rest:
                output = rest[-OUTPUT_EVENT_CHARS:]
                await self.recorder.emit(events.StepOutput(step=self.step, output=output))
        read = self._inferred_reads() if result.reads is None else result.reads
        new = [name for name in read if name not in self._read]
        if new:  # a file read again in a later step is recorded already
            self._read.update(new)
            await self.repository.record_reads(self.run, new)
        if result.queries:
            queries = [QueryOut.model_validate(query) for query in result.queries]
            self._queries.setdefault(self.step, []).extend(queries)
            await self.recorder.emit(events.StepQueries(step=self.step, queries=queries))
        if result.artifacts:
            with tracing.span("artifacts", {"workbench.artifacts": len(result.artifacts)}):
                for artifact in result.artifacts:
                    stored = await self._store(artifact)
                    await self.recorder.emit(events.ArtifactEvent(step=self.step, artifact=stored))

    def _inferred_reads(self) -> list[str]:
        """What a step read when the sandbox could not watch it (no inotify instance was
        left, or the worker died in the step): as runs recorded before reads were watched,
        the files pinned to the question and those its code names."""
        code = self._code.get(self.step, "")
        pinned = {str(f) for f in self.run.file_ids or []}
        return [
            str(f.get("name"))
            for f in self.run.files
            if str(f.get("file_id")) in pinned or (f.get("name") and str(f["name"]) in code)
        ]

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
        self.spending.add(tokens_in, tokens_out)
        self.outcome.spent(self.spending.totals())
        self.outcome.tokens_estimated = True
        error = error or "The run stopped before this step finished."
        await self.repository.add_step(
            RunStep(
                run_id=self.run.id,
                index=step,
                thought=text.strip().removeprefix("Thought:").strip() or None,
                output=self._logs.get(step) or self._printing.get(step),
                error=error,
                duration_ms=0,
                queries=self._dump_queries(step),
                tokens_in=tokens_in,
                tokens_out=tokens_out,
            ),
            self.outcome.totals(),
            replacing=step == self._replayed,
        )
        await self.recorder.emit(events.StepError(step=step, error=error))
        await self.recorder.emit(
            events.StepFinished(
                step=step, duration_ms=0, tokens_in=tokens_in, tokens_out=tokens_out
            )
        )

    async def _store(self, artifact: ArtifactFile) -> ArtifactOut:
        """Upload an artifact's bytes and record it; the sandbox's own copy is then removed."""
        key = f"sessions/{self.run.session_id}/artifacts/{uuid.uuid4().hex}"
        relative = artifact.path.relative_to(self.workspace).as_posix()
        try:
            await upload(self.storage, self.workspace, relative, key, artifact.mime)
        except (hostfs.UnsafePath, FileNotFoundError):
            raise
        except Exception as exc:
            raise StorageFailed(
                "Object storage stopped answering, so the run was stopped: this step's charts, "
                f"tables and files could not be kept. Ask again once it is back. ({exc})"
            ) from exc
        if relative.startswith(f"{BOOKKEEPING_DIR}/"):
            # The worker's own copy; removed without following links (the code controls it).
            await asyncio.to_thread(hostfs.remove, self.workspace, relative)
        row = Artifact(
            run_id=self.run.id,
            session_id=self.run.session_id,
            step=self.step,
            kind=artifact.kind,
            name=artifact.name,
            mime=artifact.mime,
            size=artifact.size,
            storage_key=key,
        )
        return ArtifactOut.model_validate(await self.repository.add_artifact(row))

    async def _plan(self, plan: PlanningStep) -> None:
        if getattr(plan, "tokens_estimated", False):
            self.outcome.tokens_estimated = True
        usage = plan.token_usage
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        entry = events.Plan(
            step=self.step, text=plan.plan, tokens_in=tokens_in, tokens_out=tokens_out
        )
        await self.repository.add_note(self.run.id, self.outcome.totals(), plan=entry.data())
        await self.recorder.emit(entry)

    async def _verdict(self, verdict: Verdict) -> None:
        entry = events.Verification(
            step=self.step,
            verdict=verdict.verdict,
            reason=verdict.reason,
            tokens_in=verdict.tokens_in,
            tokens_out=verdict.tokens_out,
            final=verdict.final,
        )
        # What the run keeps of it (`final` only matters while it streams).
        kept = entry.data()
        del kept["final"]
        await self.repository.add_note(self.run.id, self.outcome.totals(), verification=kept)
        await self.recorder.emit(entry)

    async def _finish_step(self, action: ActionStep) -> None:
        number = action.step_number
        if number in self._finished:  # smolagents yields the last step twice at max steps
            return
        self._finished.add(number)
        self.step = number
        await self._ensure_started()
        usage = action.token_usage
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        carried_in, carried_out = self._carried.pop(number, (0, 0))  # spent before it waited
        tokens_in, tokens_out = tokens_in + carried_in, tokens_out + carried_out
        waiting = action.action_output
        if isinstance(waiting, CodeForApproval | UserQuestion):
            # The run waits for the user: review mode (the code has not run: the step is
            # recorded once decided), or the code asked and stopped there (recorded as far
            # as it ran, and again once it went on with the answer).
            model_output = action.model_output if isinstance(action.model_output, str) else ""
            asked = isinstance(waiting, UserQuestion)
            self.outcome.pause = Pause(
                number,
                kind="input" if asked else "approval",
                question=waiting.question if isinstance(waiting, UserQuestion) else "",
                code=waiting.code if isinstance(waiting, CodeForApproval) else "",
                model_output=model_output,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                goes_on=waiting.goes_on if isinstance(waiting, AskedUser) else None,
            )
            if not asked:
                return
        error = str(action.error) if action.error else None
        if error:
            await self.recorder.emit(events.StepError(step=number, error=error))
        if getattr(action, "tokens_estimated", False):
            self.outcome.tokens_estimated = True
        duration_ms = int((action.timing.duration or 0) * 1000)
        await self.repository.add_step(
            RunStep(
                run_id=self.run.id,
                index=number,
                thought=_thought(action.model_output),
                code=action.code_action,
                output=self._logs.get(number),
                error=error,
                duration_ms=duration_ms,
                queries=self._dump_queries(number),
                tokens_in=tokens_in,
                tokens_out=tokens_out,
            ),
            self.outcome.totals(),
            replacing=number == self._replayed,
        )
        await self.recorder.emit(
            events.StepFinished(
                step=number, duration_ms=duration_ms, tokens_in=tokens_in, tokens_out=tokens_out
            )
        )
        self.step = number + 1

    def _dump_queries(self, step: int) -> list[dict[str, object]]:
        return [query.model_dump() for query in self._queries.pop(step, [])]


def _unsent(logs: str, sent: str) -> str:
    """What of a step's logs was not sent while it ran (all of it, on a line of its own,
    when the logs do not go on from what was sent: a worker restarted, or capped logs)."""
    if logs.startswith(sent):
        return logs[len(sent) :]
    return logs if not sent else "\n" + logs


def _thought(model_output: object) -> str | None:
    if not isinstance(model_output, str):
        return None
    text = model_output.split("<code>", 1)[0].strip()
    return text.removeprefix("Thought:").strip() or None


def _answer_text(output: object) -> str:
    return output if isinstance(output, str) else str(output)

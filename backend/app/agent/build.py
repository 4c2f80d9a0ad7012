"""Building the CodeAgent for one run: the model, the sandbox executor, the prompt."""

from __future__ import annotations

import copy
import functools
import importlib.resources
import io
import logging
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, cast

import yaml
from rich.console import Console
from smolagents import CodeAgent, LiteLLMModel
from smolagents.agent_types import handle_agent_output_types
from smolagents.agents import ActionOutput, FinalAnswerStep, PromptTemplates
from smolagents.local_python_executor import fix_final_answer_code
from smolagents.memory import ActionStep, MemoryStep, PlanningStep, SystemPromptStep, ToolCall
from smolagents.models import (
    ChatMessage,
    ChatMessageStreamDelta,
    MessageRole,
    agglomerate_stream_deltas,
)
from smolagents.monitoring import AgentLogger, LogLevel, Timing, TokenUsage
from smolagents.utils import (
    AgentError,
    AgentExecutionError,
    AgentGenerationError,
    AgentParsingError,
    truncate_content,
)

from app.agent import prompting, repair
from app.agent.calls import CallLimits, ModelFailed, StepLimit, context_overflow
from app.agent.model import close_stream, server_counted, settle_call
from app.agent.transcript import memory_messages
from app.observability import tracing
from app.sandbox import CodeForApproval, UserQuestion

log = logging.getLogger(__name__)
# What the model reads back of a reply that had no code (the rest is of no use to it and
# would fill a small model's context).
UNREADABLE_ECHO_CHARS = 1000
# How smolagents frames a step's observation (see CodeAgent._step_stream).
_LOGS_HEAD = "Execution logs:\n"
_VALUE_HEAD = "Last output from code snippet:\n"


class MaxStepsReached(Exception):
    """The agent used all its steps without a final answer."""


def _user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": text}])


@dataclass(frozen=True)
class PlanDelta:
    """A piece of a plan as the model streams it (kept apart from the steps' own text)."""

    content: str


class ReplayModel:
    """A model whose next streamed answer is given (the step the user approved or edited:
    the model wrote it before the run waited); every later call goes to the real model."""

    def __init__(self, model: Any, text: str):
        self._model = model
        self._text: str | None = text

    def generate_stream(self, *args: Any, **kwargs: Any) -> Any:
        if self._text is None:
            return self._model.generate_stream(*args, **kwargs)
        text, self._text = self._text, None
        # Its tokens were counted when the model wrote it.
        return iter([ChatMessageStreamDelta(content=text, token_usage=TokenUsage(0, 0))])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class WorkbenchAgent(CodeAgent):
    """A CodeAgent with our system prompt, our planning prompts (which see the files and
    variables, unlike smolagents' own), answer checks whose reason the model reads, replies
    read with the repairs of app.agent.repair, and no free-form answer at the step limit."""

    def __init__(self, *, system_prompt: str, limits: CallLimits, **kwargs: Any):
        # Set before CodeAgent.__init__, which builds the system prompt.
        self._workbench_system_prompt = system_prompt
        self.limits = limits
        self._empty_replies = 0  # in a row
        self._first_step = 1
        self._replayed_step: int | None = None
        super().__init__(**kwargs)

    def continue_run(
        self, task: str, steps: list[MemoryStep], next_step: int, replay: str | None = None
    ) -> Generator[ActionStep | PlanningStep | FinalAnswerStep | ChatMessageStreamDelta]:
        """Go on with a run that waited: `steps` is its memory (see app.agent.memory), the
        next step is numbered `next_step`; what it yields is what `run(stream=True)` yields.

        `replay`: what the model wrote for that step before the run waited (code the user
        approved or edited): the step runs it instead of calling the model again.
        """
        if replay is not None:
            self.model = ReplayModel(self.model, replay)  # type: ignore[assignment,has-type]
            self._replayed_step = next_step  # its plan, if any, was written already
        self.task = task
        self.interrupt_switch = False
        self.memory.system_prompt = SystemPromptStep(system_prompt=self.system_prompt)
        self.memory.steps = list(steps)
        self.python_executor.send_tools({**self.tools, **self.managed_agents})
        self._first_step = next_step
        return self._run_stream(task=self.task, max_steps=self.max_steps)

    def _run_stream(
        self, task: str, max_steps: int, images: list[Any] | None = None
    ) -> Generator[ActionStep | PlanningStep | FinalAnswerStep | ChatMessageStreamDelta]:
        # smolagents 1.26's loop, starting at self._first_step (1, or where a run that
        # waited goes on) instead of always at 1; steps and plans keep their run's numbers.
        self.step_number = self._first_step
        returned_final_answer = False
        final_answer: Any = None
        action_step: ActionStep | None = None
        while not returned_final_answer and self.step_number <= max_steps:
            if self.interrupt_switch:
                raise AgentError("Agent interrupted.", self.logger)
            if (
                self.planning_interval is not None
                and self.step_number != self._replayed_step
                and (self.step_number == 1 or (self.step_number - 1) % self.planning_interval == 0)
            ):
                planning_step = None
                with tracing.span("plan", {"workbench.step": self.step_number}):
                    for element in self._generate_planning_step(
                        task, is_first_step=self.step_number == 1, step=self.step_number
                    ):
                        yield element  # type: ignore[misc]
                        planning_step = element
                assert isinstance(planning_step, PlanningStep)
                self._finalize_step(planning_step)
                self.memory.steps.append(planning_step)
            action_step = ActionStep(
                step_number=self.step_number, timing=Timing(start_time=time.time())
            )
            number = self.step_number
            with tracing.span(f"step {number}", {"workbench.step": number}) as span:
                try:
                    for output in self._step_stream(action_step):
                        yield output  # type: ignore[misc]
                        if isinstance(output, ActionOutput) and output.is_final_answer:
                            final_answer = output.output
                            if self.final_answer_checks:
                                self._validate_final_answer(final_answer)
                            returned_final_answer = True
                            action_step.is_final_answer = True
                except AgentGenerationError as e:  # the run ends; its step says why too
                    action_step.error = e
                    raise
                except AgentError as e:  # the model's mistake: it reads the error and goes on
                    action_step.error = e
                finally:
                    if span is not None and action_step.error is not None:
                        span.set_attribute("error.type", type(action_step.error).__name__)
                    self._finalize_step(action_step)
                    self.memory.steps.append(action_step)
                    yield action_step
                    self.step_number += 1
        if not returned_final_answer and self.step_number == max_steps + 1:
            final_answer = self._handle_max_steps_reached(task)
            yield action_step  # type: ignore[misc]
        final_answer_step = FinalAnswerStep(handle_agent_output_types(final_answer))
        self._finalize_step(final_answer_step)
        yield final_answer_step

    def _step_stream(
        self, memory_step: ActionStep
    ) -> Generator[ChatMessageStreamDelta | ToolCall | ActionOutput]:
        # smolagents 1.26's CodeAgent step (streamed, no structured outputs), with the reply
        # read by app.agent.repair instead of smolagents' parse_code_blobs.
        memory_step.model_input_messages = self.write_memory_to_messages()
        stop_sequences = ["Observation:", "Calling tools:", repair.CODE_CLOSE]
        deltas: list[ChatMessageStreamDelta] = []
        streamed = ""
        # LLM_TIMEOUT_SECONDS bounds the whole reply, not only the wait for each piece.
        deadline = time.monotonic() + self.limits.timeout_seconds
        overtime = False
        called = time.monotonic()
        try:
            stream = self.model.generate_stream(
                memory_step.model_input_messages, stop_sequences=stop_sequences
            )
            try:
                for event in stream:
                    deltas.append(event)
                    yield event
                    if not event.content:
                        continue
                    streamed += event.content
                    # A fenced block of code has ended: like "</code>", that ends the reply.
                    if "\n" in event.content and repair.first_block_end(streamed) is not None:
                        break
                    if repair.repeats_itself(streamed):
                        log.info("step %s: cut the model's reply (a loop)", self.step_number)
                        break
                    if time.monotonic() > deadline:
                        overtime = True
                        break
            finally:
                close_stream(stream, self.model)
                # The thread is named after the run (see the runner): benchmarks read this.
                log.info(
                    "%s step %s: the model call took %.1f s",
                    threading.current_thread().name,
                    self.step_number,
                    time.monotonic() - called,
                )
        except Exception as e:
            # The step keeps what the model wrote before it failed, and what that cost.
            memory_step.model_output = streamed
            memory_step.token_usage = self._usage(memory_step, deltas, streamed)
            raise ModelFailed(self.limits.failure(e), self.logger) from e
        output = agglomerate_stream_deltas(deltas)
        memory_step.model_output_message = output
        memory_step.token_usage = self._usage(memory_step, deltas, streamed)
        text = output.content if isinstance(output.content, str) else None
        memory_step.model_output = text
        if overtime:
            raise StepLimit(
                f"The model's reply took longer than LLM_TIMEOUT_SECONDS "
                f"({self.limits.timeout_seconds:g} s) and was cut off; its code did not run.",
                self.logger,
            )
        self._check_not_empty(text, memory_step.token_usage)
        try:
            reply = repair.read_reply(text, last_output=self._last_output())
        except repair.UnreadableReply as e:
            if memory_step.token_usage.output_tokens >= self.limits.max_output_tokens:
                raise StepLimit(
                    f"The model's reply reached LLM_MAX_OUTPUT_TOKENS "
                    f"({self.limits.max_output_tokens:,} tokens) before its code was complete; "
                    "it did not run. Write less before the code.",
                    self.logger,
                ) from e
            if text and len(text) > UNREADABLE_ECHO_CHARS:
                memory_step.model_output = output.content = text[:UNREADABLE_ECHO_CHARS] + "…"
            raise AgentParsingError(str(e), self.logger) from e
        if reply.repair:
            log.info("step %s: repaired the model's reply (%s)", self.step_number, reply.repair)
        # The model reads its reply back in the expected form, which it then tends to copy.
        memory_step.model_output = output.content = reply.as_expected()
        code = fix_final_answer_code(reply.code)
        memory_step.code_action = code
        tool_call = ToolCall(
            name="python_interpreter", arguments=code, id=f"call_{len(self.memory.steps)}"
        )
        yield tool_call
        memory_step.tool_calls = [tool_call]
        try:
            code_output = self.python_executor(code)
        except Exception as e:
            raise AgentExecutionError(str(e), self.logger) from e
        value = truncate_content(str(code_output.output))
        memory_step.observations = _LOGS_HEAD + code_output.logs + _VALUE_HEAD + value
        memory_step.action_output = code_output.output
        yield ActionOutput(output=code_output.output, is_final_answer=code_output.is_final_answer)

    def _usage(
        self, step: ActionStep, deltas: list[ChatMessageStreamDelta], text: str
    ) -> TokenUsage:
        """The reply's tokens as the server counted them, else counted here (estimated)."""
        sent = [d.token_usage for d in deltas if d.token_usage is not None]
        if not server_counted(self.model):
            step.tokens_estimated = True  # type: ignore[attr-defined]
        if sent and (sent[-1].input_tokens or sent[-1].output_tokens):
            usage = TokenUsage(
                input_tokens=sent[-1].input_tokens,
                output_tokens=sum(u.output_tokens for u in sent),
            )
        else:
            step.tokens_estimated = True  # type: ignore[attr-defined]
            messages = [m.dict() for m in step.model_input_messages or []]
            usage = TokenUsage(
                input_tokens=self.limits.count(messages=messages),
                output_tokens=self.limits.count(text=text) if text else 0,
            )
        settle_call(self.model, usage.input_tokens, usage.output_tokens)
        return usage

    def _check_not_empty(self, text: str | None, usage: TokenUsage) -> None:
        """An empty reply is a step error the model is asked again after, once; a second
        one, or one whose prompt filled the model's context, ends the run."""
        if text and text.strip():
            self._empty_replies = 0
            return
        self._empty_replies += 1
        window = self.limits.context_tokens
        if window and usage.input_tokens + 64 >= window:
            raise ModelFailed(context_overflow(window), self.logger)
        if self._empty_replies >= 2:
            raise ModelFailed(
                f"The model returned nothing twice in a row (its prompt was "
                f"{usage.input_tokens:,} tokens). If its server's context is smaller than "
                "that, give it a larger one and set LLM_CONTEXT_TOKENS; otherwise try "
                "another model.",
                self.logger,
            )
        raise StepLimit(repair.EMPTY_REPLY, self.logger)  # the model reads it, and goes on

    def _last_output(self) -> str | None:
        """What the previous step's code printed and returned, if it ran without an error."""
        previous = next((s for s in reversed(self.memory.steps) if isinstance(s, ActionStep)), None)
        if previous is None or previous.error is not None or not previous.observations:
            return None
        text = previous.observations.removeprefix(_LOGS_HEAD)
        logs, _, value = text.partition(_VALUE_HEAD)
        shown = [part.strip() for part in (logs, value) if part.strip() not in ("", "None")]
        return "\n".join(shown) or None

    def write_memory_to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        return self._fit(memory_messages(self.memory, summary_mode=summary_mode))

    def _fit(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The messages, made to fit the model's context (when it is known) with room for a
        reply: older repeats of code (where the reply does not hold it) go first, then the
        oldest outputs, then the oldest replies, then the last output. The system prompt and
        the question always stay; a conversation that does not fit even so ends the run,
        saying so."""
        window = self.limits.context_tokens
        if not window:
            return messages
        room = window - min(self.limits.max_output_tokens, window // 2)

        def size() -> int:
            return self.limits.count(messages=[m.dict() for m in messages])

        if size() <= room:
            return messages
        messages = list(messages)
        later = range(2, len(messages))  # after the system prompt and the question
        last = {
            role: max((i for i in later if messages[i].role == role), default=-1)
            for role in (MessageRole.TOOL_CALL, MessageRole.TOOL_RESPONSE, MessageRole.ASSISTANT)
        }
        order = [
            *(i for i in later if messages[i].role == MessageRole.TOOL_CALL),
            *(
                i
                for i in later
                if messages[i].role == MessageRole.TOOL_RESPONSE
                and i != last[MessageRole.TOOL_RESPONSE]
            ),
            *(
                i
                for i in later
                if messages[i].role == MessageRole.ASSISTANT and i != last[MessageRole.ASSISTANT]
            ),
            last[MessageRole.TOOL_RESPONSE],
        ]
        left_out = (
            "[Left out to fit the model's context of "
            f"{window:,} tokens: this earlier part of the conversation.]"
        )
        for i in order:
            if i < 0:
                continue
            messages[i] = ChatMessage(
                role=messages[i].role, content=[{"type": "text", "text": left_out}]
            )
            if size() <= room:
                log.info("step %s: left out older messages to fit the context", self.step_number)
                return messages
        raise ModelFailed(context_overflow(window), self.logger)

    def initialize_system_prompt(self) -> str:
        return self._workbench_system_prompt

    def _generate_planning_step(
        self, task: str, is_first_step: bool, step: int
    ) -> Generator[ChatMessageStreamDelta | PlanDelta | PlanningStep]:
        started = time.time()
        system = ChatMessage(
            role=MessageRole.SYSTEM, content=[{"type": "text", "text": self.system_prompt}]
        )
        if is_first_step:
            ask = prompting.render_initial_plan(task)
            history: list[ChatMessage] = []
        else:
            ask = prompting.render_plan_update(task, step - 1, self.max_steps - step + 1)
            history = self.write_memory_to_messages(summary_mode=True)
        messages = [system, *history, _user(ask)]
        text, tokens_in, tokens_out = "", 0, 0
        deadline = time.monotonic() + self.limits.timeout_seconds
        try:
            stream = self.model.generate_stream(messages, stop_sequences=["<end_plan>"])
            try:
                for event in stream:
                    if event.content:
                        text += event.content
                        yield PlanDelta(event.content)
                    if event.token_usage:
                        tokens_in = event.token_usage.input_tokens
                        tokens_out += event.token_usage.output_tokens
                    if repair.repeats_itself(text):
                        log.info("plan %s: cut the model's plan (a loop)", step)
                        break
                    if time.monotonic() > deadline:  # the plan so far will do
                        log.info("plan %s: cut at LLM_TIMEOUT_SECONDS", step)
                        break
            finally:
                close_stream(stream, self.model)
        except Exception as e:
            raise ModelFailed(self.limits.failure(e), self.logger) from e
        settle_call(self.model, tokens_in, tokens_out)
        text = text.split("<end_plan>", 1)[0].strip()
        planned = PlanningStep(
            model_input_messages=messages,
            plan=text,
            model_output_message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            token_usage=TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out),
            timing=Timing(start_time=started, end_time=time.time()),
        )
        planned.tokens_estimated = not server_counted(self.model)  # type: ignore[attr-defined]
        yield planned

    def _validate_final_answer(self, final_answer: Any) -> None:
        if isinstance(final_answer, UserQuestion | CodeForApproval):  # the run waits
            return
        # A check returns what is wrong (the model reads it as the step's error) or None.
        for check in self.final_answer_checks:
            problem = check(final_answer, self.memory, agent=self)
            if problem:
                raise AgentError(problem, self.logger)

    def _handle_max_steps_reached(self, task: str) -> Any:
        # smolagents would ask the model for an answer without running code; an analyst
        # needs to know the analysis did not finish instead, and why when the model never
        # wrote code that could run.
        actions = [s for s in self.memory.steps if isinstance(s, ActionStep)]
        # Replies without code: unreadable, empty, or cut off by a limit before their code.
        unreadable = sum(s.error is not None and not s.code_action for s in actions)
        if actions and unreadable == len(actions):
            raise MaxStepsReached(
                f"The agent used all {self.max_steps} steps without reaching an answer: the "
                "model wrote no code that could run in any of them (its replies were empty "
                "or had no code block). It may be too small to follow the agent's format; "
                "try a larger model."
            )
        raise MaxStepsReached(
            f"The agent used all {self.max_steps} steps without reaching an answer"
            + (f" ({unreadable} of its replies had no code)" if unreadable else "")
            + ". Ask a narrower question, or ask it to continue."
        )


@functools.cache
def _code_agent_templates() -> dict[str, Any]:
    """smolagents' CodeAgent prompt templates, parsed once (CodeAgent parses its YAML file
    on every construction: a few milliseconds of CPU per run, a lot with many at once)."""
    text = importlib.resources.files("smolagents.prompts").joinpath("code_agent.yaml").read_text()
    return cast(dict[str, Any], yaml.safe_load(text))


def create_agent(
    *,
    model: LiteLLMModel,
    limits: CallLimits,
    executor: Any,
    system_prompt: str,
    authorized_imports: list[str],
    max_steps: int,
    planning_interval: int = 0,
    final_answer_checks: list[Callable[..., str | None]] | None = None,
) -> WorkbenchAgent:
    return WorkbenchAgent(
        system_prompt=system_prompt,
        prompt_templates=cast(PromptTemplates, copy.deepcopy(_code_agent_templates())),
        limits=limits,
        planning_interval=planning_interval or None,
        final_answer_checks=final_answer_checks,
        tools=[],
        model=model,
        executor=executor,
        additional_authorized_imports=authorized_imports,
        max_steps=max_steps,
        stream_outputs=True,
        # smolagents draws a live view on stdout even at LogLevel.OFF unless given a console.
        logger=AgentLogger(LogLevel.OFF, console=Console(file=io.StringIO())),
    )

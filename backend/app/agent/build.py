"""Building the CodeAgent for one run: the model, the sandbox executor, the prompt."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import litellm
from rich.console import Console
from smolagents import CodeAgent, LiteLLMModel
from smolagents.agent_types import handle_agent_output_types
from smolagents.agents import ActionOutput, FinalAnswerStep
from smolagents.memory import ActionStep, MemoryStep, PlanningStep, SystemPromptStep
from smolagents.models import ChatMessage, ChatMessageStreamDelta, MessageRole
from smolagents.monitoring import AgentLogger, LogLevel, Timing, TokenUsage
from smolagents.utils import AgentError, AgentGenerationError

from app.agent import prompting
from app.config import ModelPrice, Settings
from app.errors import BadRequest
from app.sandbox.interface import CodeForApproval, UserQuestion

# LiteLLM would otherwise print its own hints ("Give Feedback / Get Help") to stdout.
litellm.suppress_debug_info = True


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
    variables, unlike smolagents' own), answer checks whose reason the model reads, and no
    free-form answer at the step limit."""

    def __init__(self, *, system_prompt: str, **kwargs: Any):
        # Set before CodeAgent.__init__, which builds the system prompt.
        self._workbench_system_prompt = system_prompt
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
            try:
                for output in self._step_stream(action_step):
                    yield output  # type: ignore[misc]
                    if isinstance(output, ActionOutput) and output.is_final_answer:
                        final_answer = output.output
                        if self.final_answer_checks:
                            self._validate_final_answer(final_answer)
                        returned_final_answer = True
                        action_step.is_final_answer = True
            except AgentGenerationError:
                raise
            except AgentError as e:  # the model's mistake: it reads the error and goes on
                action_step.error = e
            finally:
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
        for event in self.model.generate_stream(messages, stop_sequences=["<end_plan>"]):
            if event.content:
                text += event.content
                yield PlanDelta(event.content)
            if event.token_usage:
                tokens_in = event.token_usage.input_tokens
                tokens_out += event.token_usage.output_tokens
        text = text.split("<end_plan>", 1)[0].strip()
        yield PlanningStep(
            model_input_messages=messages,
            plan=text,
            model_output_message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            token_usage=TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out),
            timing=Timing(start_time=started, end_time=time.time()),
        )

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
        # needs to know the analysis did not finish instead.
        raise MaxStepsReached(
            f"The agent used all {self.max_steps} steps without reaching an answer. "
            "Ask a narrower question, or ask it to continue."
        )


def resolve_model(settings: Settings, requested: str | None) -> str:
    """The model for a run: the one asked for if it is offered, else the default."""
    offered = settings.llm_models
    if not offered:
        raise BadRequest(
            "No LLM is configured. Set LLM_MODEL (and LLM_API_KEY or the provider's key, "
            "e.g. OPENROUTER_API_KEY) in .env and restart the workbench.",
            code="no_model_configured",
        )
    if requested is None:
        return offered[0]
    if requested not in offered:
        raise BadRequest(
            f"The model {requested!r} is not offered here. Choose one of: {', '.join(offered)}.",
            code="unknown_model",
        )
    return requested


def create_model(settings: Settings, model_id: str) -> LiteLLMModel:
    return LiteLLMModel(
        model_id=model_id,
        api_base=settings.LLM_API_BASE,
        api_key=settings.LLM_API_KEY,
        # Plain-string message contents: some OpenAI-compatible local servers reject parts.
        flatten_messages_as_text=True,
        # smolagents' own 429 retry waits a minute per attempt; the OpenAI client's short
        # retries of 429, 5xx and timeouts (LLM_MAX_RETRIES) are enough.
        retry=False,
        max_retries=settings.LLM_MAX_RETRIES,
        timeout=settings.LLM_TIMEOUT_SECONDS,
    )


def create_agent(
    *,
    model: LiteLLMModel,
    executor: Any,
    system_prompt: str,
    authorized_imports: list[str],
    max_steps: int,
    planning_interval: int = 0,
    final_answer_checks: list[Callable[..., str | None]] | None = None,
    step_callbacks: dict[type[MemoryStep], Callable[..., None]] | None = None,
) -> WorkbenchAgent:
    return WorkbenchAgent(
        system_prompt=system_prompt,
        planning_interval=planning_interval or None,
        final_answer_checks=final_answer_checks,
        step_callbacks=step_callbacks,
        tools=[],
        model=model,
        executor=executor,
        additional_authorized_imports=authorized_imports,
        max_steps=max_steps,
        stream_outputs=True,
        # smolagents draws a live view on stdout even at LogLevel.OFF unless given a console.
        logger=AgentLogger(LogLevel.OFF, console=Console(file=io.StringIO())),
    )


_SECRET_SHAPES = re.compile(r"\b(sk|pk|rk|key|or)-[A-Za-z0-9_\-]{8,}|\bBearer\s+\S+", re.IGNORECASE)


def provider_error_message(exc: BaseException, secrets: list[str | None]) -> str:
    """The provider's error for the user, without any key in it."""
    text = str(exc.__cause__ or exc)
    text = text.removeprefix("Error in generating model output:\n")
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    text = _SECRET_SHAPES.sub("[redacted]", text)
    return text.strip()[:1000]


def step_cost(
    model_id: str, tokens_in: int, tokens_out: int, prices: dict[str, ModelPrice]
) -> float | None:
    """Cost in USD by `prices` (LLM_PRICES, per million tokens) or else LiteLLM's price list;
    None when neither knows the model."""
    price = prices.get(model_id)
    if price is not None:
        return (tokens_in * price.input + tokens_out * price.output) / 1_000_000
    try:
        prompt, completion = litellm.cost_per_token(
            model=model_id, prompt_tokens=tokens_in, completion_tokens=tokens_out
        )
    except Exception:
        return None
    return float(prompt + completion)

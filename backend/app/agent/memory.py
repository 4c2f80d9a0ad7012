"""An agent's memory as JSON, so a run that waits (for the user's answer or approval) holds
no thread: it is stored with the run and the agent is built again wherever it resumes,
with the user's reply written into it (`resume`).

Only what the next model calls read is kept (smolagents' `to_messages`): the task, each
plan, and each step's model output, tool call, observations and error. The prompts sent
for each call are not (they are rebuilt from these).
"""

from __future__ import annotations

from typing import Any

from smolagents.memory import ActionStep, MemoryStep, PlanningStep, TaskStep, ToolCall
from smolagents.models import ChatMessage, MessageRole
from smolagents.monitoring import Timing, TokenUsage
from smolagents.utils import AgentError

from app.sandbox import UserQuestion


class StoredError(AgentError):
    """A step's error read back from storage: only its text matters (the model reads it)."""

    def __init__(self, message: str):
        Exception.__init__(self, message)
        self.message = message


def _usage(usage: TokenUsage | None) -> list[int] | None:
    return [usage.input_tokens, usage.output_tokens] if usage else None


def _timing(timing: Timing) -> list[float | None]:
    return [timing.start_time, timing.end_time]


def dump(steps: list[MemoryStep]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for step in steps:
        if isinstance(step, TaskStep):
            out.append({"type": "task", "task": step.task})
        elif isinstance(step, PlanningStep):
            out.append(
                {
                    "type": "plan",
                    "plan": step.plan,
                    "usage": _usage(step.token_usage),
                    "timing": _timing(step.timing),
                }
            )
        elif isinstance(step, ActionStep):
            out.append(
                {
                    "type": "action",
                    "step": step.step_number,
                    "model_output": step.model_output
                    if isinstance(step.model_output, str)
                    else None,
                    "tool_calls": [
                        {"id": c.id, "name": c.name, "arguments": c.arguments}
                        for c in step.tool_calls or []
                    ],
                    "code": step.code_action,
                    "observations": step.observations,
                    "error": str(step.error) if step.error is not None else None,
                    "usage": _usage(step.token_usage),
                    "timing": _timing(step.timing),
                    "final": step.is_final_answer,
                }
            )
    return out


def _token_usage(value: Any) -> TokenUsage | None:
    return TokenUsage(int(value[0]), int(value[1])) if value else None


def load(data: list[dict[str, Any]]) -> list[MemoryStep]:
    steps: list[MemoryStep] = []
    for item in data:
        kind = item.get("type")
        if kind == "task":
            steps.append(TaskStep(task=str(item["task"])))
        elif kind == "plan":
            plan = str(item["plan"])
            steps.append(
                PlanningStep(
                    model_input_messages=[],
                    model_output_message=ChatMessage(role=MessageRole.ASSISTANT, content=plan),
                    plan=plan,
                    timing=Timing(*item["timing"]),
                    token_usage=_token_usage(item.get("usage")),
                )
            )
        elif kind == "action":
            steps.append(
                ActionStep(
                    step_number=int(item["step"]),
                    timing=Timing(*item["timing"]),
                    model_output=item.get("model_output"),
                    tool_calls=[
                        ToolCall(name=c["name"], arguments=c["arguments"], id=c["id"])
                        for c in item.get("tool_calls") or []
                    ]
                    or None,
                    code_action=item.get("code"),
                    observations=item.get("observations"),
                    error=StoredError(item["error"]) if item.get("error") else None,
                    token_usage=_token_usage(item.get("usage")),
                    is_final_answer=bool(item.get("final")),
                )
            )
    return steps


def resume(
    data: list[dict[str, Any]],
    pending: dict[str, Any],
    *,
    answer: str | None = None,
    decision: str | None = None,
    code: str | None = None,
    feedback: str | None = None,
) -> tuple[list[MemoryStep], str | None]:
    """The memory of a run that waited, with the user's reply in it, as the model will read it.

    Args:
        data: The memory as `dump` stored it.
        pending: What the run waited for: `kind` ("input" or "approval"), `step`, the
            `model_output` of that step, and its question or the `code` it waits with.
        answer: The user's answer (kind input). The asking step goes on with it (see
            app.agent.asking); a run that asked before steps went on gets it as its result.
        decision: approve, edit or reject (kind approval).
        code: The edited code (decision edit).
        feedback: Why the code was rejected, if the user said.

    Returns:
        The steps, and what the model wrote for the step that runs again from it
        (`WorkbenchAgent.continue_run`'s replay): approved (or edited) code, or the code
        that asked (it goes on from the question).
    """
    steps = load(data)
    step = int(pending["step"])
    if pending["kind"] == "input" and "goes_on" not in pending:
        # Asked before runs went on after an answer: the answer is the step's result.
        _answer(steps, step, answer or "", pending.get("target"))
        return steps, None
    if pending["kind"] == "input":  # the step goes on from the statement that asked
        steps = [s for s in steps if not (isinstance(s, ActionStep) and s.step_number == step)]
        return steps, str(pending.get("model_output") or "")
    if decision == "reject":  # the model reads why, and writes new code
        _reject(steps, step, feedback)
        return steps, None
    steps = [s for s in steps if not (isinstance(s, ActionStep) and s.step_number == step)]
    chosen = code if decision == "edit" and code else pending["code"]
    return steps, _with_code(pending.get("model_output") or "", chosen)


def _with_code(model_output: str, code: str) -> str:
    """What the model wrote for a step, with `code` as its code block (an edit)."""
    thought = model_output.split("<code>", 1)[0].rstrip()
    return f"{thought}\n<code>\n{code.strip()}\n</code>"


def _reject(steps: list[MemoryStep], step: int, feedback: str | None) -> None:
    """The rejected step's result, as the model will read it: why, and that nothing ran."""
    said = "The user rejected this code, so it did not run."
    said += f" Their feedback: {feedback}" if feedback else " They gave no reason."
    said += " Take it into account and write different code."
    for action in steps:
        if isinstance(action, ActionStep) and action.step_number == step:
            action.observations, action.error, action.action_output = said, None, None


def _answer(steps: list[MemoryStep], step: int, answer: str, target: str | None) -> None:
    """Make the user's answer the asking step's result, as the model will read it."""
    for action in steps:
        if isinstance(action, ActionStep) and action.step_number == step:
            said = f"ask_user returned the user's answer: {answer!r}"
            if target:
                said += f" (it is now the value of {target})"
            placeholder = str(UserQuestion(""))
            observations = action.observations or ""
            action.observations = (
                observations.replace(placeholder, said)
                if placeholder in observations
                else f"{observations}\n{said}".strip()
            )
            action.action_output = answer

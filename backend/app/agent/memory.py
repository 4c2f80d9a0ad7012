"""An agent's memory as JSON, so a run that waits (for the user's answer or approval) holds
no thread: it is stored with the run and the agent is built again wherever it resumes.

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

"""The agent's memory as the messages the model reads, without repeating a step's code.

smolagents writes each step's code twice: in the model's reply, between the code tags, and
again as a "Calling tools:" message holding the same code as a Python repr. The model reads
its reply already (the repairs make it the expected form, see app.agent.repair), so the
repeat only costs prompt tokens on every later call. It is kept where the reply is not
shown (summary mode, which planning uses) or does not hold the code.
"""

from __future__ import annotations

from dataclasses import replace

from smolagents.memory import ActionStep, AgentMemory, MemoryStep
from smolagents.models import ChatMessage


def memory_messages(memory: AgentMemory, summary_mode: bool = False) -> list[ChatMessage]:
    """What smolagents' `write_memory_to_messages` gives, less the repeated code."""
    messages = memory.system_prompt.to_messages(summary_mode=summary_mode)
    for step in memory.steps:
        messages.extend(_once(step, summary_mode).to_messages(summary_mode=summary_mode))
    return messages


def _once(step: MemoryStep, summary_mode: bool) -> MemoryStep:
    """The step without its tool call when its reply, which the model reads, holds the code."""
    if summary_mode or not isinstance(step, ActionStep) or not step.tool_calls:
        return step
    reply = step.model_output if isinstance(step.model_output, str) else ""
    if not all(str(call.arguments) in reply for call in step.tool_calls):
        return step
    return replace(step, tool_calls=None)

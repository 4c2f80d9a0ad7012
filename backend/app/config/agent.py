"""Agent settings: the steps of one answer, its plans and checks, and how long a run waits
for the user.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class AgentSettings(BaseModel):
    """Section "The agent": steps, plans, checks and waiting for the user."""

    AGENT_MAX_STEPS: int = Field(
        12,
        ge=1,
        le=100,
        description="Most steps (think, run code, observe) one answer may take.",
        json_schema_extra=doc(Section.agent),
    )
    AGENT_PLANNING_INTERVAL: int = Field(
        4,
        ge=0,
        le=100,
        description="The agent writes a short plan before its first step and revises it "
        "every this many steps (shown above the steps); `0`: no plans.",
        json_schema_extra=doc(Section.agent),
    )
    AGENT_VERIFY_ROUNDS: int = Field(
        1,
        ge=0,
        le=5,
        description="A second model call checks each final answer against the question, the "
        'code and its outputs; a "revise" verdict sends the agent back to work with the '
        "reason, at most this many times (the verdict is shown with the answer); `0`: no "
        "check.",
        json_schema_extra=doc(Section.agent),
    )
    REPAIR_STRATEGIES: int = Field(
        3,
        ge=0,
        le=3,
        description="When a step fails twice in a row, the agent tries this many repair "
        "strategies at once (re-read the data's real columns and types, a simpler method, a "
        "different library), each in a sandbox worker of its own started from the run's "
        "variables; the first whose code runs and that the answer check accepts continues "
        "the run as its next step. Never more strategies than the run has steps left "
        "(AGENT_MAX_STEPS); their tokens count against the budget. `0`: no repair fan-out.",
        json_schema_extra=doc(Section.agent),
    )
    RUN_INPUT_TIMEOUT_SECONDS: float = Field(
        24 * 3600,
        gt=0,
        description="How long a run waits for the user's answer (`ask_user`) or approval "
        "(review mode) before it fails, in seconds (24 hours).",
        json_schema_extra=doc(Section.agent),
    )

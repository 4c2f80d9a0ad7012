"""How much of a project's knowledge the agent is given with each question."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class KnowledgePromptSettings(BaseModel):
    """Section "The agent": the room the team's knowledge takes in the agent's prompt."""

    KNOWLEDGE_PROMPT_TOKENS: int = Field(
        2000,
        ge=0,
        le=100_000,
        description="The most tokens (estimated) of a project's knowledge items given to the "
        "agent with each question: the rules first (always, even past this), then the "
        "definitions, column meanings, examples and lessons most relevant to the question and "
        "its files. Items that do not fit are named in the prompt, not shown; `0`: rules only.",
        json_schema_extra=doc(Section.agent),
    )

"""Project knowledge settings: how long one item may be, how much a project may keep, and
how much of it the agent is given with a question."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class KnowledgeSettings(BaseModel):
    """Section "Project knowledge": the bounds of the items a project's team writes, and
    the room they take in the agent's prompt."""

    KNOWLEDGE_ITEM_MAX_CHARS: int = Field(
        4000,
        ge=100,
        le=100_000,
        description="The longest body a knowledge item (a definition, rule, column "
        "description, example or lesson) may have, in characters; a longer one is refused "
        "with a sentence saying so (422).",
        json_schema_extra=doc(Section.knowledge),
    )
    KNOWLEDGE_MAX_ITEMS: int = Field(
        10_000,
        ge=1,
        description="The most knowledge items one project may keep (whatever their status); "
        "adding one more is refused (413) until some are deleted.",
        json_schema_extra=doc(Section.knowledge),
    )
    KNOWLEDGE_PROMPT_TOKENS: int = Field(
        2000,
        ge=0,
        le=100_000,
        description="The most tokens (estimated) of a project's knowledge items given to the "
        "agent with each question: the rules first (always, even past this), then the "
        "definitions, column meanings, examples and lessons most relevant to the question and "
        "its files. Items that do not fit are named in the prompt, not shown; `0`: rules only.",
        json_schema_extra=doc(Section.knowledge),
    )

"""Project knowledge settings: how long one item may be and how much a project may keep."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class KnowledgeSettings(BaseModel):
    """Section "Project knowledge": the bounds of the items a project's team writes."""

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

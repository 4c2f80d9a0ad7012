"""Settings of the review pass: after a run succeeds, a model call proposes what is worth
keeping of it as project knowledge (app/knowledge/review.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class KnowledgeReviewSettings(BaseModel):
    """Section "Project knowledge": the review pass that proposes items after a run."""

    KNOWLEDGE_REVIEW: bool = Field(
        True,
        description="After a run succeeds, a review pass (one model call on the run's model, "
        "after `run.finished`) proposes knowledge items worth keeping: definitions, rules, "
        "columns, examples and lessons. They wait for a person's approval; `false`: no "
        "review pass (and no model call for it).",
        json_schema_extra=doc(Section.knowledge),
    )
    KNOWLEDGE_REVIEW_TIMEOUT_SECONDS: float = Field(
        60,
        gt=0,
        le=600,
        description="The longest a review pass may take (its model call included); one "
        "that takes longer proposes nothing.",
        json_schema_extra=doc(Section.knowledge),
    )
    KNOWLEDGE_REVIEW_CONCURRENCY: int = Field(
        2,
        ge=1,
        le=64,
        description="Most review passes under way at once on a replica; a run that ends "
        "while this many are under way is not reviewed (a log line says so).",
        json_schema_extra=doc(Section.knowledge),
    )
    KNOWLEDGE_REVIEW_MAX_PROPOSALS: int = Field(
        5,
        ge=1,
        le=20,
        description="Most items one run's review pass may propose.",
        json_schema_extra=doc(Section.knowledge),
    )

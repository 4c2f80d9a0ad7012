"""The shapes of knowledge items in the API (API.md, "Project knowledge and checks")."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.models.knowledge import KnowledgeKind, KnowledgeStatus

TITLE_MAX_CHARS = 200
# Control characters (C0, DEL, C1) other than tab and newline (and carriage return, which a
# pasted text from Windows carries): refused, so that no item hides text from its readers.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def refuse_control_characters(value: str | None) -> str | None:
    if value is not None and _CONTROL.search(value):
        raise ValueError("must not hold NUL or other control characters (only newlines and tabs)")
    return value


class AppliesTo(BaseModel):
    """What an item is about; all None: the whole project."""

    model_config = ConfigDict(extra="forbid")

    file_id: uuid.UUID | None = None
    source_id: uuid.UUID | None = None
    table: str | None = Field(
        None,
        max_length=511,
        description='A source\'s table as its data dictionary names it ("schema.table"), '
        "or a file's sheet.",
    )
    column: str | None = Field(None, max_length=255)

    _clean = field_validator("table", "column")(refuse_control_characters)


class KnowledgeCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: KnowledgeKind
    title: str = Field(min_length=1, max_length=TITLE_MAX_CHARS)
    # Its bound is the KNOWLEDGE_ITEM_MAX_CHARS setting (checked by the service).
    body: str = Field(min_length=1)
    applies_to: AppliesTo | None = None

    _clean = field_validator("title", "body")(refuse_control_characters)


class KnowledgeUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(None, min_length=1, max_length=TITLE_MAX_CHARS)
    body: str | None = Field(None, min_length=1)
    applies_to: AppliesTo | None = None
    status: Literal[KnowledgeStatus.approved, KnowledgeStatus.rejected] | None = None

    _clean = field_validator("title", "body")(refuse_control_characters)


class KnowledgeOut(BaseModel):
    id: uuid.UUID
    project_id: uuid.UUID
    kind: KnowledgeKind
    title: str
    body: str
    applies_to: AppliesTo
    status: KnowledgeStatus
    source_run_id: uuid.UUID | None
    created_by: uuid.UUID | None
    created_by_email: str | None
    approved_by: uuid.UUID | None
    approved_by_email: str | None
    approved_at: datetime | None
    created_at: datetime
    updated_at: datetime
    flags: list[str] = Field(
        description='What a screening of its text found (e.g. "instructions"); a flagged '
        "item is never approved without a person."
    )
    tokens: int = Field(description="Its prompt size, estimated (about 4 characters a token).")
    target_missing: str | None = Field(
        description="A sentence when the file, source or table it applies to no longer exists."
    )


class KnowledgePage(BaseModel):
    """One page of a project's items, newest first (`limit` and `offset` page it)."""

    items: list[KnowledgeOut]
    total: int

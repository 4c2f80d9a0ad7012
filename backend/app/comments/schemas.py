"""Comments as the API reads and writes them."""

from __future__ import annotations

import re
import uuid
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from app.schemas import PersonOut

MAX_BODY_CHARS = 4000
# Control characters other than a line break or a tab: nothing a person types, and some
# (a bidirectional override, a bell) would make a comment read other than it is.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class CommentCreate(BaseModel):
    body: str = Field(
        min_length=1, max_length=MAX_BODY_CHARS, description="The comment (plain text)"
    )
    reply_to: uuid.UUID | None = Field(None, description="A comment of the same run it answers")

    @field_validator("body")
    @classmethod
    def _readable(cls, value: str) -> str:
        if CONTROL.search(value):
            raise ValueError("a comment cannot hold control characters")
        value = value.strip()
        if not value:
            raise ValueError("a comment cannot be empty")
        return value


class CommentOut(BaseModel):
    id: uuid.UUID
    run_id: uuid.UUID
    author: PersonOut | None = Field(description="Who wrote it (null: a user deleted since)")
    body: str
    reply_to: uuid.UUID | None
    created_at: datetime

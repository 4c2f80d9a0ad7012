"""A search hit as the API returns it."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, Field

HitKind = Literal["session", "question", "answer", "code", "artifact"]


class SearchHit(BaseModel):
    kind: HitKind = Field(
        description="What matched: a session's title, a question, an answer, a step's code "
        "or an artifact's name"
    )
    session_id: uuid.UUID
    run_id: uuid.UUID | None = Field(description="The run it is part of (null: a session's title)")
    project_id: uuid.UUID
    title: str = Field(description="The session's title")
    snippet: str = Field(
        description="The matching text around the hit: HTML-escaped, each hit inside "
        "`<mark>…</mark>` (the only markup it holds)"
    )


class SearchPage(BaseModel):
    items: list[SearchHit]
    total: int

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.models import Session
from app.runs.budget import Usage
from app.schemas import Schema, UsageTotals

Autonomy = Literal["auto", "review"]


class SessionCreate(BaseModel):
    title: str | None = Field(None, max_length=200)
    autonomy: Autonomy = "auto"


class SessionUpdate(BaseModel):
    title: str | None = Field(None, min_length=1, max_length=200)
    autonomy: Autonomy | None = Field(
        None,
        description="auto: code runs as soon as it is written; review: each code block waits "
        "for POST /runs/{id}/approval",
    )


class SessionOut(Schema, UsageTotals):
    id: uuid.UUID
    project_id: uuid.UUID
    title: str
    autonomy: Autonomy
    recorded: bool = Field(
        False, description="Its history was loaded from a recording (the demo's): replayable"
    )
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, session: Session, usage: Usage | None) -> SessionOut:
        return cls.model_validate(session).model_copy(update=vars(usage or Usage()))

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.models import Session
from app.runs.budget import Usage
from app.schemas import Schema, UsageTotals


class SessionCreate(BaseModel):
    title: str | None = Field(None, max_length=200)


class SessionUpdate(BaseModel):
    title: str = Field(min_length=1, max_length=200)


class SessionOut(Schema, UsageTotals):
    id: uuid.UUID
    project_id: uuid.UUID
    title: str
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, session: Session, usage: Usage | None) -> SessionOut:
        return cls.model_validate(session).model_copy(update=vars(usage or Usage()))

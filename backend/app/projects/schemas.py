from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.models import Project
from app.runs.budget import Usage
from app.schemas import Schema, UsageTotals


class ProjectCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    description: str = Field("", max_length=10_000)


class ProjectUpdate(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=10_000)
    # null removes the budget; leaving the field out keeps it.
    budget_usd: float | None = Field(None, ge=0, le=1_000_000_000)
    budget_tokens: int | None = Field(None, ge=0, le=10**15)


class ProjectOut(Schema, UsageTotals):
    id: uuid.UUID
    name: str
    description: str
    budget_usd: float | None = None
    budget_tokens: int | None = None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, project: Project, usage: Usage | None) -> ProjectOut:
        return cls.model_validate(project).model_copy(update=vars(usage or Usage()))

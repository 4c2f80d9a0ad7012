from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from app.auth.schemas import normalise_email
from app.models import Project
from app.ownership import Role, RoleName
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
    default_attempts: int | None = Field(
        None, ge=1, le=5, description="Attempts a question gets when it does not say (1-5)"
    )


class ProjectOut(Schema, UsageTotals):
    id: uuid.UUID
    name: str
    description: str
    budget_usd: float | None = None
    budget_tokens: int | None = None
    default_attempts: int = Field(1, description="Attempts a question gets when it does not say")
    created_at: datetime
    updated_at: datetime
    role: RoleName = Field(description="The caller's role in the project")

    @classmethod
    def of(cls, project: Project, usage: Usage | None, role: Role) -> ProjectOut:
        fields = {"role": role.name, **vars(usage or Usage())}
        return cls.model_validate({**_columns(project), **fields})


def _columns(project: Project) -> dict[str, object]:
    return {
        name: getattr(project, name) for name in ProjectOut.model_fields if hasattr(project, name)
    }


class MemberAdd(BaseModel):
    email: str = Field(max_length=320, description="The email the user logs in with")
    role: RoleName

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        return normalise_email(value)


class MemberUpdate(BaseModel):
    role: RoleName


class MemberOut(UsageTotals):
    """A member, with what their questions in this project have spent."""

    user_id: uuid.UUID
    email: str
    role: RoleName
    added_at: datetime
    runs: int = Field(0, description="How many questions they asked in this project")

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.schemas import PersonOut

DEFAULT_DAYS = 30
MAX_DAYS = 365


class ShareCreate(BaseModel):
    expires_in_days: int = Field(
        DEFAULT_DAYS, ge=1, le=MAX_DAYS, description="How many days the link works"
    )
    runs: list[uuid.UUID] | None = Field(
        None,
        max_length=1000,
        description="The session's runs to show (default: those its report shows now, the "
        "runs that succeeded; a question asked later is never shown)",
    )


class ShareCreated(BaseModel):
    id: uuid.UUID
    url: str = Field(description="The link: anyone who has it sees the report, without logging in")
    token: str = Field(description="The link's secret, shown only in this answer")
    expires_at: datetime


class ShareOut(BaseModel):
    id: uuid.UUID
    session_id: uuid.UUID
    runs: list[uuid.UUID] = Field(description="The runs the link shows")
    created_at: datetime
    created_by: PersonOut | None = Field(description="Who made it (null: a deleted user)")
    expires_at: datetime
    revoked_at: datetime | None
    active: bool = Field(
        description="Whether the link works now (not expired, not revoked, its author still "
        "an editor or owner of the project with an enabled account)"
    )
    status: Literal["active", "revoked", "expired", "author_lost_access"] = Field(
        description="Where the link stands: author_lost_access when whoever made it was "
        "removed from the project, made a viewer or disabled (it opens nothing; an owner can "
        "re-issue it)"
    )


class JobShareOut(BaseModel):
    id: uuid.UUID
    url: str | None = Field(
        description="The link: it shows the job's latest run to anyone who has it (null: its "
        "token can no longer be opened, e.g. SECRET_KEY changed; save the alerts again)"
    )
    expires_at: datetime

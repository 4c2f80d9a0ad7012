"""The shapes of invites: asking for one, the answer that shows its link once, a listed one."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from app.auth.schemas import LoginResponse, normalise_email
from app.ownership import RoleName
from app.schemas import PersonOut

InviteStatus = Literal["pending", "accepted", "revoked", "expired"]
EmailStatus = Literal["not_sent", "sending", "sent", "failed"]


class InviteCreate(BaseModel):
    email: str = Field(max_length=320, description="Who is invited")
    project_id: uuid.UUID | None = Field(
        None, description="The project they join on accepting (an administrator may leave it out)"
    )
    role: RoleName | None = Field(
        None, description="Their role in that project (default editor); only with project_id"
    )
    expires_in_days: int | None = Field(
        None,
        ge=1,
        description="How many days the link works (default INVITE_DAYS, at most INVITE_MAX_DAYS)",
    )

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        return normalise_email(value)


class InviteCreated(BaseModel):
    id: uuid.UUID
    url: str = Field(description="The link the person opens to set their password")
    token: str = Field(description="The link's secret, shown only in this answer")
    expires_at: datetime
    email: str
    project_id: uuid.UUID | None
    role: RoleName | None
    email_status: EmailStatus = Field(
        description="not_sent: no SMTP server is configured (pass the link on yourself); "
        "sending: on its way (GET /invites tells how it went)"
    )


class InviteOut(BaseModel):
    id: uuid.UUID
    email: str
    project_id: uuid.UUID | None
    project_name: str | None
    role: RoleName | None
    created_by: PersonOut | None = Field(description="Who made it (null: a deleted user)")
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None
    revoked_at: datetime | None
    status: InviteStatus
    email_status: EmailStatus
    email_error: str | None = Field(description="Why the email failed, when it did")


class InviteAccept(BaseModel):
    password: str = Field(min_length=8, max_length=1024, description="The password they choose")


class InviteAccepted(LoginResponse):
    """The login of the person who accepted, and the project they joined (if any)."""

    project_id: uuid.UUID | None = Field(None, description="The project they joined")

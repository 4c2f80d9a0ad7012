from __future__ import annotations

import re
import uuid
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from app.ownership import RoleName
from app.schemas import Schema

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def normalise_email(value: str) -> str:
    value = value.strip().lower()
    if not _EMAIL.match(value) or len(value) > 320:
        raise ValueError("is not a valid email address")
    return value


class LoginRequest(BaseModel):
    email: str = Field(max_length=320)
    password: str = Field(max_length=1024)


class UserOut(Schema):
    id: uuid.UUID
    email: str
    is_admin: bool
    disabled: bool = Field(description="A disabled user cannot log in; their tokens are refused")
    created_at: datetime
    password_changed_at: datetime | None = None
    must_change_password: bool = Field(
        False,
        description="An administrator gave this user a generated password: until they "
        "choose their own (POST /auth/password), every other call answers 403 "
        "password_change_required",
    )
    storage_quota_mb: int | None = Field(
        None,
        description="An administrator's storage quota for this user in MiB (0: unlimited); "
        "null: the server's USER_STORAGE_QUOTA_MB",
    )


class UserProjectOut(BaseModel):
    id: uuid.UUID
    name: str
    role: RoleName


class ListedUserOut(UserOut):
    """A user as administrators list them: with the projects they are a member of."""

    projects: list[UserProjectOut] = Field(default_factory=list)


class LoginResponse(BaseModel):
    access_token: str
    token_type: str = "bearer"
    expires_at: datetime
    user: UserOut


class UserCreate(BaseModel):
    email: str
    password: str | None = Field(
        None,
        min_length=8,
        max_length=1024,
        description="Their password. Left out: one is generated, shown once in the answer "
        "(`generated_password`), and they must change it at their first login",
    )
    is_admin: bool = False

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        return normalise_email(value)


class UserWithPassword(UserOut):
    """A user an administrator just made or reset, with the password generated for them."""

    generated_password: str | None = Field(
        None,
        description="The generated password, shown only in this answer (null: none was "
        "generated); the user must change it at their first login",
    )


class PasswordChange(BaseModel):
    current_password: str = Field(max_length=1024)
    new_password: str = Field(min_length=8, max_length=1024)


class UserUpdate(BaseModel):
    """An administrator's changes to a user (fields left out stay as they are)."""

    is_admin: bool | None = None
    disabled: bool | None = Field(None, description="true: no login, tokens refused")
    password: str | None = Field(
        None, min_length=8, max_length=1024, description="A new password (ends their logins)"
    )
    generate_password: bool = Field(
        False,
        description="true: a new generated password (in the answer, once), which they must "
        "change at their next login; ends their logins like `password`",
    )
    storage_quota_mb: int | None = Field(
        None,
        ge=0,
        le=1 << 30,
        description="Their storage quota in MiB (0: unlimited); null: back to the server's "
        "USER_STORAGE_QUOTA_MB. Left out: unchanged.",
    )


class ApiTokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class ApiTokenOut(Schema):
    id: uuid.UUID
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None


class ApiTokenCreated(BaseModel):
    id: uuid.UUID
    name: str
    token: str
    created_at: datetime

"""People and the API tokens they mint."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class User(IdMixin, Base):
    __tablename__ = "users"

    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A disabled user's logins and API tokens are refused; nothing of theirs is deleted.
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    password_changed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # Login tokens carry the version they were issued at: a password change or reset bumps
    # it, which signs out every earlier login at once.
    login_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # An administrator's storage quota for this user, in MiB (0: unlimited); None: the
    # server's USER_STORAGE_QUOTA_MB.
    storage_quota_mb: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Set when an administrator gave the password (generated, shown once): until the user
    # chooses their own, the API answers 403 password_change_required to all but that.
    must_change_password: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )

    @property
    def disabled(self) -> bool:
        return self.disabled_at is not None


class ApiToken(IdMixin, Base):
    """A long-lived bearer token; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

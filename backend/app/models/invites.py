"""Invitations to an account (and maybe a project), and the short-lived one-time records
of a single sign-on: its state while the browser is at the provider, then the code the
browser trades for a login."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class Invite(IdMixin, Base):
    """A one-time link with which a person sets their password. Only the SHA-256 of its
    token is stored (the token is shown once); it ends when accepted, revoked or expired."""

    __tablename__ = "invites"

    email: Mapped[str] = mapped_column(String(320), index=True)
    # The project the person joins on accepting, with this role (None: an account only).
    project_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), nullable=True, index=True
    )
    role: Mapped[str | None] = mapped_column(String(10), nullable=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # not_sent (no SMTP server configured), sending, sent or failed (email_error says why).
    email_status: Mapped[str] = mapped_column(String(16), default="not_sent")
    email_error: Mapped[str | None] = mapped_column(String(500), nullable=True)


class SignInHandoff(Base):
    """A one-time record of a sign-on, found by the SHA-256 of its key and deleted when
    used: `oidc_state` (the state sent to the provider, with its nonce and PKCE verifier)
    or `login_code` (what the browser trades for a login token). In the database, so a
    callback reaching another replica finds it."""

    __tablename__ = "sign_in_handoffs"

    key_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)

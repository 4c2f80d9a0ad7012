"""Read-only links to a session's report: anyone holding one sees the report, nothing else."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class Share(IdMixin, Base):
    """A link to the report of some runs of a session. Only the SHA-256 of its token is
    stored (the token is shown once); it ends when it expires, is revoked, or its session
    goes (cascade)."""

    __tablename__ = "shares"

    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The runs the report shows (ids, in the session's order), fixed when the link is made:
    # a question asked later is never shown through it.
    runs: Mapped[list[str]] = mapped_column(JSON)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # A job's link (issue 45): it shows the job's latest run, whatever `runs` says; its
    # token is kept sealed (app.sources.credentials) so that alert messages carry the link.
    job_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, nullable=True, index=True)
    token_sealed: Mapped[str | None] = mapped_column(Text, nullable=True)

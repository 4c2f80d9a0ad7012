"""The audit log: who did what in a project, one row an event, never changed or deleted.

No foreign keys: the rows outlive the project (its deletion is the last event) and the
people they name (each row keeps the actor's email as it was). Each project's events form a
hash chain (app/audit_chain.py): event `seq` carries the hash of event `seq - 1` and its own,
over every field; `audit_chains` holds each chain's head (its last number and hash).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class AuditEvent(IdMixin, Base):
    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_project_id_at", "project_id", "at"),
        # One event a number in a project's chain: two writers can never fork it.
        UniqueConstraint("project_id", "seq"),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Who did it (None: the workbench itself); the email as it was then.
    actor_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, nullable=True)
    actor_email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    subject_type: Mapped[str] = mapped_column(String(20))
    subject_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    summary: Mapped[str] = mapped_column(Text)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Its place in the project's chain (1, 2, …), the hash of the event before it (64 zeros
    # for the first) and its own: SHA-256 of every field above and prev_hash.
    seq: Mapped[int] = mapped_column(Integer)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class AuditChain(Base):
    """The head of a project's chain: its last event's number and hash. Locked (PostgreSQL:
    `SELECT … FOR UPDATE`; SQLite: a write first, which serialises writers) while an event
    is added, and compared with the last event when the chain is verified (rows removed
    from its end)."""

    __tablename__ = "audit_chains"

    project_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    head: Mapped[str] = mapped_column(String(64))

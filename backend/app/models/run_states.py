"""The state a run left (issue 43): the snapshot record of the session's variables at the end
of every run, and the content-addressed chunks those records are stored as.

A record (`RunState.record`, the same shape as `Session.snapshot`) lists each snapshot file
with the SHA-256 digests of its fixed-size chunks; a chunk is stored once per project
(`SnapshotChunk`), however many records name it. `app.runs.run_states` keeps and reads the
records; `app.runs.state_retention` drops old ones and deletes the chunks nothing names.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, UTCDateTime, utcnow


class RunState(Base):
    """The session's variables at the end of one run (dropped by retention, never the
    newest of a session)."""

    __tablename__ = "run_states"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )
    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    # What the state holds, and what storing it added (the chunks no earlier record had).
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    new_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SnapshotChunk(Base):
    """A stored chunk of snapshot bytes, named by its SHA-256, in one project.

    `used_at` is when a record last came to name it (a new record, or a branch given a
    kept state): the sweep deletes only chunks nothing names and nobody used lately.
    """

    __tablename__ = "snapshot_chunks"
    __table_args__ = (Index("ix_snapshot_chunks_used_at", "used_at"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    used_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SnapshotOrphanSuspect(Base):
    """A chunk object seen in storage with no `SnapshotChunk` row (app.runs.chunk_sweep),
    shared by every replica: deleted once seen so for the grace period. `deleted_at`: the
    sweep deleted it then (kept for a grace period so that a writer whose row came just
    after knows to store the bytes again)."""

    __tablename__ = "snapshot_orphan_suspects"

    project_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

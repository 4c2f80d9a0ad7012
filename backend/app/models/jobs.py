"""Jobs: code recorded from a session's runs, made into a script with parameters and data
checks (app.jobs), and each of its runs (kept apart from the job, as a job handle is from
the worker that executes it)."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class JobRunStatus(StrEnum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    skipped = "skipped"


class Job(IdMixin, Base):
    __tablename__ = "jobs"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    # The session the job was made from, and the runs of it (ids, in order).
    source_session_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True
    )
    source_run_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    # The session the job's code runs in (its sandbox worker, its runs of kind `cell`).
    session_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True
    )
    # The script (`PARAMS` and `run(params) -> results`, see app.jobs.script) and its tests.
    code: Mapped[str] = mapped_column(Text)
    tests: Mapped[str] = mapped_column(Text, default="")
    # [{name, kind: file | query | value, default}], [{name, kind: value | table | chart}].
    params: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    results: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    alerts: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    autonomy: Mapped[str] = mapped_column(String(10), default="review")
    # The checks' writing: {status: writing | ready | partial, note, lease_until?}.
    checks: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The files it was made from ({name: sha256}) and the results it gave on them: the
    # pinned test holds only on those bytes.
    made_from: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class JobRun(IdMixin, Base):
    __tablename__ = "job_runs"

    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    # The run of kind `cell` that ran the script in the job's session.
    run_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
    )
    trigger: Mapped[str] = mapped_column(String(20))  # manual | schedule | ...
    # The schedule's tick it ran for: one run a tick, however many replicas fired it.
    scheduled_for: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    status: Mapped[str] = mapped_column(String(20), default=JobRunStatus.queued)
    skipped_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    results: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    change: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # What it read: {files: {name: sha256}, queries: {name: digest}} (a run with the same
    # inputs as the last one is skipped).
    inputs: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # Renewed while a replica runs it; past it, the sweeper ends the run (its replica died).
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (Index("uq_job_runs_tick", "job_id", "scheduled_for", unique=True),)

"""A job's repairs (issue 45, point 3): new code (and tests) the model proposed after a run
of the job failed, checked in the sandbox, waiting for an editor's say (or applied at once
when the job's autonomy is `auto`)."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class JobRepairStatus(StrEnum):
    repairing = "repairing"  # the model and the sandbox are at it
    proposed = "proposed"  # its checks pass: waiting for an editor
    approved = "approved"
    rejected = "rejected"
    applied = "applied"  # the job's code and tests are the repair's
    failed = "failed"  # no code the model proposed passed the checks


class JobRepair(IdMixin, Base):
    __tablename__ = "job_repairs"

    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    # The run that failed (what the repair answers).
    job_run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("job_runs.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(20), default=JobRepairStatus.repairing)
    reason: Mapped[str] = mapped_column(Text, default="")
    old_code: Mapped[str] = mapped_column(Text, default="")
    new_code: Mapped[str | None] = mapped_column(Text, nullable=True)
    old_tests: Mapped[str] = mapped_column(Text, default="")
    new_tests: Mapped[str | None] = mapped_column(Text, nullable=True)
    diff: Mapped[str] = mapped_column(Text, default="")
    # The proposed code's checks in the sandbox: [{name, passed, message}].
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The results and files the proposed code was checked on (its pinned test's data).
    checked_on: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    proposed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    decided_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    applied_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

"""What a project's team knows (knowledge items the agent is given with each question) and
the project's own checks (questions with expected answers, run to measure the answers)."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, TimestampMixin, UTCDateTime, utcnow


class KnowledgeKind(StrEnum):
    definition = "definition"  # a term and what it means (a formula or code where there is one)
    rule = "rule"  # "always / never …": given with every question
    column = "column"  # what a column (or a table) of a file or source means: the dictionary
    example = "example"  # a question with the code or SQL that answered it: a verified query
    lesson = "lesson"  # a correction learned in a run


class KnowledgeStatus(StrEnum):
    proposed = "proposed"  # by the review pass; reaches no prompt until a person approves it
    approved = "approved"
    rejected = "rejected"


class KnowledgeItem(IdMixin, TimestampMixin, Base):
    """One item of a project's knowledge. `applies_to` is spread over four columns (all
    None: the whole project); the file and source are kept by id without a foreign key, so
    that an item whose file or source was deleted stays and says so."""

    __tablename__ = "knowledge_items"
    __table_args__ = (
        Index("ix_knowledge_items_project_id_status", "project_id", "status"),
        # The version of a project's knowledge (count, last change), read from this alone.
        Index("ix_knowledge_items_project_id_updated_at", "project_id", "updated_at"),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default=KnowledgeStatus.approved)
    file_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, nullable=True)
    source_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, nullable=True, index=True)
    # "schema.table" for a source's table (as its data dictionary names it), or a sheet.
    table_name: Mapped[str | None] = mapped_column(String(511), nullable=True)
    column_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # The run it was proposed from or saved as verified from.
    source_run_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
    )
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    approved_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    approved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # What a screening of its text found (e.g. "instructions": it tries to change the
    # agent's rules, reveal secrets or call tools); a flagged item is never auto-approved.
    flags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    # Its prompt size, estimated when written, so that selection need not count again.
    tokens: Mapped[int] = mapped_column(Integer, default=0)


class ProjectCheck(IdMixin, TimestampMixin, Base):
    """A question with its expected answer, in the eval harness's answer format: `expected`
    is {name: value}, the answer ends with @name[value] for each (app/cli/eval_dabench.py)."""

    __tablename__ = "project_checks"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    question: Mapped[str] = mapped_column(Text)
    expected: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The answer format asked of the agent (DABench's `format`), "" for none.
    format: Mapped[str] = mapped_column(Text, default="")
    from_run_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
    )
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )


class CheckRunStatus(StrEnum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"  # every check was asked (whatever their results)
    failed = "failed"  # it could not go on (see `error`)
    cancelled = "cancelled"


class CheckRun(IdMixin, Base):
    """One run of all a project's checks, in the background; its results are CheckResults."""

    __tablename__ = "check_runs"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(20), default=CheckRunStatus.queued)
    model: Mapped[str] = mapped_column(String(200))
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    # The session its questions are asked in (the project's own, made for this run).
    session_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True
    )
    total: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class CheckResult(IdMixin, Base):
    """One check's outcome in a check run: pending | passed | failed | error. The question
    and expected answer are copied, so a later edit of the check leaves history as it was."""

    __tablename__ = "check_results"

    check_run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("check_runs.id", ondelete="CASCADE"), index=True
    )
    check_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("project_checks.id", ondelete="SET NULL"), nullable=True
    )
    position: Mapped[int] = mapped_column(Integer)
    question: Mapped[str] = mapped_column(Text)
    expected: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    run_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
    )
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Why it failed or erred, in a sentence ("@revenue: 1200 given, 1150 expected").
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)

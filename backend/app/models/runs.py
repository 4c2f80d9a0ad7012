"""A session's history: runs (one per question), their steps, and the artifacts they made."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

if TYPE_CHECKING:
    from app.models.users import User

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class RunStatus(StrEnum):
    queued = "queued"
    running = "running"
    waiting_input = "waiting_input"
    waiting_approval = "waiting_approval"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


class RunKind(StrEnum):
    question = "question"  # the agent answers a question
    cell = "cell"  # the user's own code (app.runs.cells): no model is called


class Run(IdMixin, Base):
    __tablename__ = "runs"

    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(20), default=RunStatus.queued)
    # Who asked (None: asked before projects had members, or the user was deleted since).
    user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    kind: Mapped[str] = mapped_column(
        String(10), default=RunKind.question, server_default=RunKind.question.value
    )
    query: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
    # A cell's run: {language: "python" | "sql", source?: name, variable?: where an SQL
    # cell's result is kept, output?: what it printed (capped), for the agent's history}.
    cell: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    file_ids: Mapped[list[str]] = mapped_column(JSON, default=list, server_default="[]")
    final_answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    # Some of its tokens were counted here (the model's server did not say).
    tokens_estimated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    # The agent's plans ({step, text, tokens_in, tokens_out}: written before that step) and
    # the checks of its answers ({step, verdict, reason, tokens_in, tokens_out}), in order.
    plans: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    verifications: Mapped[list[dict[str, Any]]] = mapped_column(
        JSON, default=list, server_default="[]"
    )
    # A run that waits for the user holds no thread: what it waits for ({kind: "input",
    # step, question, target} or {kind: "approval", step, code}), since when, and the
    # agent's memory (app.agent.memory) to build the agent again from, on any replica.
    pending: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    waiting_since: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    agent_memory: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    # What the agent asked the user and the answers ({step, question, answer}), in order.
    inputs: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    # The user's decisions on code in review mode ({step, decision, code?, feedback?}).
    approvals: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    # The project's files as the run's workspace had them ({file_id, name, version, sha256});
    # those its code read are in `reads`.
    files: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    # The project's knowledge items it was given ({item_id, title, used}: `used` once its
    # code or answer relied on the item), in the order the prompt had them.
    knowledge: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    # A question asked with several attempts (app.attempts): each attempt ({attempt,
    # strategy, model, status, answer, tokens_in, tokens_out, cost_usd}) and the verdict
    # ({agreement, outcome, chosen, groups, reason}); None for a single attempt.
    attempts: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    verdict: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    asker: Mapped[User | None] = relationship(lazy="selectin", viewonly=True)
    steps: Mapped[list[RunStep]] = relationship(
        order_by="RunStep.index",
        cascade="all, delete-orphan",
        passive_deletes=True,
        lazy="selectin",
    )
    artifacts: Mapped[list[Artifact]] = relationship(
        order_by="Artifact.created_at", lazy="selectin", viewonly=True
    )
    reads: Mapped[list[RunFileRead]] = relationship(lazy="selectin", viewonly=True)
    # Its `repair` events (parallel repairs of a failing step), kept with the run's events.
    repair_events: Mapped[list[RunEventRow]] = relationship(
        primaryjoin="and_(Run.id == RunEventRow.run_id, RunEventRow.event == 'repair')",
        order_by="RunEventRow.seq",
        lazy="selectin",
        viewonly=True,
    )

    @property
    def repairs(self) -> list[dict[str, Any]]:
        """The run's parallel repairs as its `repair` events told them (RunOut)."""
        return [e.data for e in self.repair_events]

    @property
    def files_read(self) -> list[dict[str, Any]]:
        """`files`, each with `read`: whether the run's code read that version (RunOut)."""
        read = {(str(r.file_id), r.version) for r in self.reads}
        return [
            {**f, "read": (str(f.get("file_id")), f.get("version")) in read} for f in self.files
        ]


class RunStep(IdMixin, Base):
    __tablename__ = "run_steps"
    __table_args__ = (UniqueConstraint("run_id", "index"),)

    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    thought: Mapped[str | None] = mapped_column(Text, nullable=True)
    code: Mapped[str | None] = mapped_column(Text, nullable=True)
    output: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    # The queries its code ran on the project's data sources: [{source, sql, rows,
    # duration_ms, error}] (`sql()`, see app/sandbox/asks.py).
    queries: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    # Which attempt of a question asked with several took the step (None: a single one).
    # The chosen attempt's steps are numbered 1, 2, 3…; the others' from
    # app.attempts.rows.STEP_BASE * attempt on (the run's step numbers stay unique).
    attempt: Mapped[int | None] = mapped_column(Integer, nullable=True)


class RunFileRead(Base):
    """A project file a run's code read, at the version its workspace had: seen by the
    sandbox while the steps ran (app/sandbox/worker/reads.py), or, for runs from before it
    watched, inferred once by the migration that made this table (pinned or named in code).
    No foreign key to the file: a deleted file's runs still read it."""

    __tablename__ = "run_file_reads"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )
    file_id: Mapped[uuid.UUID] = mapped_column(primary_key=True, index=True)
    version: Mapped[int] = mapped_column(Integer)


class Artifact(IdMixin, Base):
    """Something a run produced: a chart, an image, a table or a file; bytes in storage."""

    __tablename__ = "artifacts"

    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    step: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(255))
    mime: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    storage_key: Mapped[str] = mapped_column(String(512), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RunEventRow(Base):
    """Every event of a run, as streamed; replays of finished runs read these."""

    __tablename__ = "run_events"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    event: Mapped[str] = mapped_column(String(40))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

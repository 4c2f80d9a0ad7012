"""Projects, the dataset files in them, and the analysis sessions opened on them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

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
    Uuid,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, TimestampMixin, UTCDateTime, utcnow


class Project(IdMixin, TimestampMixin, Base):
    __tablename__ = "projects"

    owner_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # Spending bounds set by the owner (None: no bound): queries stop once they are reached.
    budget_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    budget_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # How many attempts a question asks for when it does not say (1-5; API.md, attempts).
    default_attempts: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # The demo project made for its owner on a first start with no model (app.demo): one
    # per user, found again by this mark.
    is_demo: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Why its last state save was refused (over SNAPSHOT_PROJECT_MAX_MB with only each
    # session's latest state left), naming what to delete; None once a save is kept again.
    snapshot_refusal: Mapped[str | None] = mapped_column(Text, nullable=True)
    # What that refusal found, while nothing that could change it did (app.runs.bound_floor).
    snapshot_floor: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class ProjectMember(Base):
    """A user's role in a project: `viewer` reads everything, `editor` also changes it
    (but not its members, budgets, sources' credentials or its existence), `owner` all."""

    __tablename__ = "project_members"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(10))
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class File(IdMixin, TimestampMixin, Base):
    """A dataset in a project. Its bytes live in object storage under `storage_key`."""

    __tablename__ = "files"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    content_type: Mapped[str] = mapped_column(String(255))
    sha256: Mapped[str] = mapped_column(String(64))
    storage_key: Mapped[str] = mapped_column(String(512), unique=True)
    # Data rows counted while the upload streamed (delimited text only).
    row_count: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # When the current version was uploaded: set by uploads only, not by previews or checks.
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The preview, computed on first request and kept until the bytes change.
    preview: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Uploading the name again makes a new version (1, 2, …); the row always describes the
    # newest, and FileVersion keeps each version's bytes, the newest included.
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # The check made right after upload: ok, empty, unreadable, too_large or not_tabular
    # (None: not checked, e.g. uploaded before checks existed), with its sentence.
    check: Mapped[str | None] = mapped_column("upload_check", String(20), nullable=True)
    problem: Mapped[str | None] = mapped_column(Text, nullable=True)


class FileVersion(IdMixin, Base):
    """One upload of a file's name: its bytes stay in storage as long as the row lives."""

    __tablename__ = "file_versions"
    __table_args__ = (UniqueConstraint("file_id", "version"),)

    file_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("files.id", ondelete="CASCADE"), index=True
    )
    version: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    storage_key: Mapped[str] = mapped_column(String(512), unique=True)
    row_count: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Who uploaded these bytes: the user their storage is charged to (app.quotas). None:
    # the user was deleted since.
    uploaded_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )


class Session(IdMixin, TimestampMixin, Base):
    """An analysis conversation on a project's files."""

    __tablename__ = "sessions"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    title: Mapped[str] = mapped_column(String(200))
    # "auto": code runs as soon as the agent writes it; "review": each code block waits for
    # the user's approval (approve, edit or reject) before it runs; "review_repairs": only
    # a repair (a retry after an error, a repair fan-out's winner) waits for it.
    autonomy: Mapped[str] = mapped_column(String(20), default="auto", server_default="auto")
    # The last snapshot of its variables (app.runs.snapshots): where the files are in
    # object storage, and what was and was not saved.
    snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Its history was loaded from a recording (the demo's), not asked here: the browser
    # offers to replay it.
    recorded: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A branch (issue 43): the session it came from and the run of that session's history it
    # continues after (both None for a root; the parent is cleared when it is deleted and
    # its branches are kept). No foreign keys: see migration 9b1d2c3e4f50.
    parent_session_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, nullable=True, index=True)
    branched_after_run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, nullable=True)
    # How a branch's state was brought back once its first run had it:
    # {"from": "snapshot" | "replay", "notes": [sentence, ...]}.
    restored: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

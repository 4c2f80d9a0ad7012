"""Projects, the dataset files in them, and the analysis sessions opened on them."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, TimestampMixin


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
    # The preview, computed on first request and kept until the bytes change.
    preview: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Session(IdMixin, TimestampMixin, Base):
    """An analysis conversation on a project's files."""

    __tablename__ = "sessions"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    title: Mapped[str] = mapped_column(String(200))
    # "auto": code runs as soon as the agent writes it; "review": each code block waits for
    # the user's approval (approve, edit or reject) before it runs.
    autonomy: Mapped[str] = mapped_column(String(10), default="auto", server_default="auto")
    # The last snapshot of its variables (app.runs.snapshots): where the files are in
    # object storage, and what was and was not saved.
    snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

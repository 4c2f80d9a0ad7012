"""A project's data sources (its databases), their cached schema, and the team's
descriptions of their tables and columns (the data dictionary)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, TimestampMixin, UTCDateTime


class DataSource(IdMixin, TimestampMixin, Base):
    """One database a project's questions may query. The password is only ever stored
    sealed (app.sources.credentials); `url` never holds it."""

    __tablename__ = "data_sources"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    # The name the agent uses: sql(…, source="name").
    name: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(20))  # postgresql | mysql | sqlite | duckdb
    url: Mapped[str] = mapped_column(Text)  # without its password
    password_sealed: Mapped[str | None] = mapped_column(Text, nullable=True)
    description: Mapped[str] = mapped_column(Text, default="")
    # What the last check found: unchecked | ready | refused | failed, with its sentence,
    # and how read-only is guaranteed (read_only_role | read_only_transaction |
    # read_only_file) once it is known.
    status: Mapped[str] = mapped_column(String(20), default="unchecked")
    status_detail: Mapped[str] = mapped_column(Text, default="")
    access: Mapped[str | None] = mapped_column(String(30), nullable=True)
    server_version: Mapped[str | None] = mapped_column(String(200), nullable=True)
    table_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The cached schema stops at SOURCES_SCHEMA_MAX_TABLES / _COLUMNS.
    schema_truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class SourceTable(IdMixin, Base):
    """A table or view of a source as its last check listed it (replaced on each check)."""

    __tablename__ = "source_tables"
    __table_args__ = (UniqueConstraint("source_id", "schema_name", "name"),)

    # The unique constraint, led by source_id, is its index.
    source_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("data_sources.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    schema_name: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    # From the catalog's statistics (None: the database keeps none yet).
    row_estimate: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # [{"name", "type", "nullable", "comment"?}] in the table's order.
    columns: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The database's own COMMENT on the table (None: it has none).
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)

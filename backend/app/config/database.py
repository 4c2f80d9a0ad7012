"""Database settings: the URL of the metadata and history database and its connection pools."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from app.config.sections import Section, doc


class DatabaseSettings(BaseModel):
    """Section "Database": its URL (an async driver) and the pools of each process."""

    DATABASE_URL: str | None = Field(
        None,
        description="Metadata and history: a SQLAlchemy async URL, "
        "`postgresql+asyncpg://user:password@host:port/db` or `sqlite+aiosqlite:///path`.",
        examples=["postgresql+asyncpg://workbench:workbench@localhost:5432/workbench"],
        json_schema_extra=doc(
            Section.database,
            unset="SQLite in `DATA_DIR/workbench.db`",
            compose="its `postgres` service",
        ),
    )
    DATABASE_POOL_SIZE: int = Field(
        10,
        ge=1,
        le=500,
        description="Database connections each backend process keeps (Postgres). Requests "
        "and runs hold one only for each short unit of work.",
        json_schema_extra=doc(Section.database),
    )
    DATABASE_MAX_OVERFLOW: int = Field(
        10,
        ge=0,
        le=500,
        description="Extra database connections each process may open under load, past "
        "`DATABASE_POOL_SIZE`.",
        json_schema_extra=doc(Section.database),
    )
    DATABASE_POOL_TIMEOUT_SECONDS: float = Field(
        10,
        gt=0,
        le=300,
        description="How long a request waits for a free connection, past size + overflow, "
        "before it answers 503 `server_busy` with `Retry-After`.",
        json_schema_extra=doc(Section.database),
    )
    DATABASE_RUNS_POOL_SIZE: int = Field(
        5,
        ge=1,
        le=500,
        description="Database connections kept for runs in progress, in a pool of their own "
        "(as many again under load), so that a flood of requests cannot make a run fail for "
        "want of a connection; a run waits up to a minute for one.",
        json_schema_extra=doc(Section.database),
    )

    @field_validator("DATABASE_URL")
    @classmethod
    def _async_driver(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.startswith(("postgres://", "postgresql://")):
            raise ValueError(
                "DATABASE_URL must name an async driver: use postgresql+asyncpg://… "
                "(or sqlite+aiosqlite:///path for SQLite)"
            )
        if not value.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
            raise ValueError(
                "DATABASE_URL must start with postgresql+asyncpg:// or sqlite+aiosqlite://"
            )
        return value

"""Redis settings: the server for locks and event logs, and how long a session's lock
outlives a backend that stopped renewing it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from app.config.sections import Section, doc


class RedisSettings(BaseModel):
    """Section "Redis": its URL and the session lock's lifetime."""

    REDIS_URL: str | None = Field(
        None,
        description="Redis for locks and event logs (`redis://`, `rediss://` or `unix://`).",
        examples=["redis://localhost:6379/0"],
        json_schema_extra=doc(
            Section.redis, unset="in-process, for one backend", compose="`redis://redis:6379/0`"
        ),
    )
    SESSION_LOCK_TTL_SECONDS: float = Field(
        30,
        ge=3,
        le=600,
        description="How long a session's lock outlives a backend that stopped renewing it "
        '(one that died mid-run): then any replica fails the run ("interrupted"), its '
        "stream ends and the session takes questions again.",
        json_schema_extra=doc(Section.redis),
    )

    @field_validator("REDIS_URL")
    @classmethod
    def _redis_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("REDIS_URL must start with redis://, rediss:// or unix://")
        return value

"""Pooled connections on real Postgres: checked before use only after sitting idle.

Each test has its server end the pooled connection's backend (as a restart of Postgres, or
a cut between, would), then asks again through the pool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from app import db as app_db
from app.db import create_engine


@pytest.fixture
async def engine(postgres_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(postgres_url, pool_size=1, max_overflow=0)
    yield engine
    await engine.dispose()


async def _backend_pid(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int(await connection.scalar(text("SELECT pg_backend_pid()")))


async def _end_backend(engine: AsyncEngine, pid: int) -> None:
    """Terminate a server process from a connection outside the pool."""
    other = create_engine(str(engine.url.render_as_string(hide_password=False)), pool_size=1)
    try:
        async with other.connect() as connection:
            assert await connection.scalar(text(f"SELECT pg_terminate_backend({pid})"))
    finally:
        await other.dispose()


async def test_a_connection_idle_past_the_threshold_is_checked_and_replaced(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await _backend_pid(engine)
    await _end_backend(engine, first)
    monkeypatch.setattr(app_db, "PING_AFTER_IDLE_SECONDS", 0.0)  # it has sat idle "long"
    second = await _backend_pid(engine)  # no error: the check found it dead and replaced it
    assert second != first


async def test_a_connection_in_steady_use_is_not_checked_and_the_pool_recovers_after_one_failure(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_db, "PING_AFTER_IDLE_SECONDS", 3600.0)
    first = await _backend_pid(engine)
    await _end_backend(engine, first)
    # Used again at once: not checked (no round trips spent on it), so the statement that
    # meets the dead connection fails ...
    with pytest.raises(DBAPIError):
        await _backend_pid(engine)
    # ... and the pool has let it go: the next one works on a new connection.
    assert await _backend_pid(engine) != first

"""The async engine, the per-request session, and migrations at start-up."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from alembic.config import Config
from sqlalchemy import Select, event, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from alembic import command

T = TypeVar("T")
# See _ping_when_idle.
PING_AFTER_IDLE_SECONDS = 1.0
log = logging.getLogger(__name__)
BACKEND_DIR = Path(__file__).resolve().parent.parent


def create_engine(
    url: str, *, pool_size: int = 10, max_overflow: int = 10, pool_timeout: float = 10
) -> AsyncEngine:
    """The engine; past pool_size + max_overflow connections a caller waits pool_timeout
    seconds, then gets sqlalchemy's TimeoutError (a 503 for requests, see errors.py)."""
    pool = {"pool_size": pool_size, "max_overflow": max_overflow, "pool_timeout": pool_timeout}
    if url.startswith("sqlite"):
        engine = create_async_engine(url, connect_args={"timeout": 30}, **pool)
        _tune_sqlite(engine.sync_engine)
        return engine
    engine = create_async_engine(url, **pool)
    _ping_when_idle(engine)
    return engine


def _ping_when_idle(engine: AsyncEngine) -> None:
    """Check a pooled connection before use only when it has sat idle PING_AFTER_IDLE_SECONDS.

    SQLAlchemy's pre-ping checks every checkout, at three round trips each with asyncpg
    (BEGIN, an empty statement, ROLLBACK): under load, as much database work as the
    statements of a run themselves. A connection in steady use has just proved itself; one
    that died unseen since fails the one statement that meets it, and SQLAlchemy then
    replaces every connection of the pool older than that failure.
    """

    @event.listens_for(engine.sync_engine.pool, "checkin")
    def _idle_from(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine.sync_engine.pool, "checkout")
    def _ping(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.get("idle_since")
        if idle_since is None or time.monotonic() - idle_since < PING_AFTER_IDLE_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # the pool drops it and takes (or opens) another
            raise DisconnectionError(f"a pooled connection no longer answers: {exc}") from exc


async def release_connection(session: AsyncSession) -> None:
    """End the session's transaction so its connection goes back to the pool before slow work.

    The loaded objects stay usable (expire_on_commit=False); the next query takes a
    connection again. Call it before streaming, parsing or waiting inside a request.
    """
    await session.commit()


def _tune_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = dbapi_connection.cursor()
        # WAL lets readers go on while a writer commits; foreign keys make cascades real.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


def alembic_config(url: str) -> Config:
    config = Config(str(BACKEND_DIR / "alembic.ini"))
    config.set_main_option("script_location", str(BACKEND_DIR / "alembic"))
    config.attributes["database_url"] = url
    return config


def upgrade_database(url: str) -> None:
    """Bring the schema to the newest revision (blocking; run it in a thread)."""
    command.upgrade(alembic_config(url), "head")


async def migrate(url: str) -> None:
    await asyncio.to_thread(upgrade_database, url)


async def paginate(
    db: AsyncSession, query: Select[T], limit: int, offset: int
) -> tuple[list[T], int]:
    """One page of an ordered query's rows, and how many rows there are in all."""
    total = await db.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    rows = await db.scalars(query.limit(limit).offset(offset))
    return list(rows), total or 0


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def after_commit(session: AsyncSession, action: Callable[[], Awaitable[object]]) -> None:
    """Run `action` once the request's transaction has committed (e.g. delete stored bytes)."""
    session.info.setdefault("after_commit", []).append(action)


async def request_session(factory: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """One transaction per request: committed when the route returns, rolled back if it raises."""
    async with factory() as session:
        try:
            yield session
            await session.commit()
        except BaseException:
            await session.rollback()
            raise
        for action in session.info.pop("after_commit", []):
            try:
                await action()
            except Exception:
                # The commit stands; a leftover object is harmless and is logged for cleanup.
                log.exception("after-commit action failed")

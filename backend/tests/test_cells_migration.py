"""The migration of cells and the demo (issue 42, points 12 and 13): runs recorded before it
are questions; projects and sessions are no demo and no recording; it goes down again. On
SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from alembic import command
from app.db import alembic_config
from tests.support import services
from tests.test_run_reads_migration import insert

BEFORE = "486a0f3d6372"
COLUMNS = {"runs": {"kind", "cell"}, "projects": {"is_demo"}, "sessions": {"recorded"}}


async def columns(url: str) -> dict[str, set[str]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda sync: {
                    table: {c["name"] for c in sa.inspect(sync).get_columns(table)}
                    for table in COLUMNS
                }
            )
    finally:
        await engine.dispose()


async def kinds(url: str) -> list[str]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return list((await conn.execute(sa.text("SELECT kind FROM runs"))).scalars())
    finally:
        await engine.dispose()


def up_and_down(url: str) -> None:
    config = alembic_config(url)
    command.upgrade(config, BEFORE)
    before = asyncio.run(columns(url))
    assert all(not COLUMNS[t] & before[t] for t in COLUMNS), before
    command.upgrade(config, "head")
    after = asyncio.run(columns(url))
    assert all(COLUMNS[t] <= after[t] for t in COLUMNS), after
    command.downgrade(config, BEFORE)
    assert asyncio.run(columns(url)) == before


def test_up_and_down_on_sqlite_and_earlier_runs_are_questions(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'workbench.db'}"
    up_and_down(url)
    config = alembic_config(url)
    with sqlite3.connect(tmp_path / "workbench.db") as db:
        insert(db, "runs", id=uuid.uuid4().hex, file_ids="[]", files="[]")
    command.upgrade(config, "head")
    assert asyncio.run(kinds(url)) == ["question"]


def test_up_and_down_on_postgresql() -> None:
    url, name = services.create_postgres_database()
    try:
        up_and_down(url)
    finally:
        services.drop_postgres_database(name)

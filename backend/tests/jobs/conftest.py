"""Fixtures for schedules and alerts: the migrated database on both stacks (a SQLite file, a
PostgreSQL database of the session), emptied before each test, and engines on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import create_engine, upgrade_database
from app.models import JobDelivery, JobSchedule

DATABASES = ("sqlite", "postgres")


@pytest.fixture(scope="session")
def sqlite_jobs_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("jobs-db") / "workbench.db"
    url = f"sqlite+aiosqlite:///{path}"
    upgrade_database(url)
    return url


@pytest.fixture(scope="session")
def postgres_jobs_url(postgres_url: str) -> str:
    upgrade_database(postgres_url)
    return postgres_url


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    name = "sqlite_jobs_url" if request.param == "sqlite" else "postgres_jobs_url"
    yield request.getfixturevalue(name)


async def _engine(url: str) -> AsyncEngine:
    engine = create_engine(url, pool_size=4, max_overflow=4)
    async with engine.begin() as conn:
        await conn.execute(delete(JobDelivery))
        await conn.execute(delete(JobSchedule))
    return engine


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an emptied database."""
    made = await _engine(database_url)
    yield made
    await made.dispose()


@pytest.fixture
async def second_engine(engine: AsyncEngine, database_url: str) -> AsyncIterator[AsyncEngine]:
    """Another engine on the same database, as a second replica has."""
    made = create_engine(database_url, pool_size=4, max_overflow=4)
    yield made
    await made.dispose()

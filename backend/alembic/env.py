"""Alembic environment: async engines for Postgres (asyncpg) and SQLite (aiosqlite).

The URL comes from the caller (`app.db.alembic_config`) or, for the alembic CLI, from
the backend's Settings. On Postgres an advisory lock serialises replicas that start at once.
"""

import asyncio

from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from alembic import context
from app.models import Base

MIGRATION_LOCK_ID = 0x5742_4D49  # "WBMI"

config = context.config
target_metadata = Base.metadata


def database_url() -> str:
    url = config.attributes.get("database_url")
    if url:
        return str(url)
    from app.config import Settings

    return Settings().database_url


def run_migrations(connection: Connection) -> None:
    is_sqlite = connection.dialect.name == "sqlite"
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=is_sqlite,
        compare_type=True,
    )
    if not is_sqlite:
        connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": MIGRATION_LOCK_ID})
    try:
        with context.begin_transaction():
            context.run_migrations()
    finally:
        if not is_sqlite:
            connection.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": MIGRATION_LOCK_ID})
            connection.commit()


async def run_async() -> None:
    engine = create_async_engine(database_url(), poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(run_migrations)
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=database_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(run_async())

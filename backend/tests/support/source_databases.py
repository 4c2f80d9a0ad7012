"""Databases for the tests of data sources, made fresh on this machine's real PostgreSQL and
MariaDB (`wb_src_<random>` databases and roles, dropped afterwards), and SQLite and DuckDB
files: each holds the same small `orders` table. Nothing skips: a server that does not
answer fails the run with what to start."""

from __future__ import annotations

import asyncio
import os
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import aiomysql
import asyncpg
import duckdb
import pytest

from tests.support.services import POSTGRES_ADMIN_DSN

MYSQL_HOST = os.environ.get("TEST_MYSQL_HOST", "127.0.0.1")
MYSQL_PORT = int(os.environ.get("TEST_MYSQL_PORT", "3306"))
ORDERS = 100
# Every source's table: id, region, amount, created_at, note.
ROWS = [(i, ("north", "south")[i % 2], i * 1.5, f"note {i}") for i in range(1, ORDERS + 1)]


@dataclass(frozen=True)
class ServerSource:
    """A database on a real server with a role that can write and one that can only read."""

    kind: str
    host: str
    port: int
    database: str
    writer: str
    reader: str
    password: str

    def url(self, role: str | None = None, password: str | None = None) -> str:
        user = role or self.writer
        return (
            f"{self.kind}://{user}:{password or self.password}@{self.host}:{self.port}/"
            f"{self.database}"
        )


def _name() -> str:
    return f"wb_src_{secrets.token_hex(5)}"


async def _pg_admin(database: str = "postgres") -> asyncpg.Connection:
    dsn = POSTGRES_ADMIN_DSN.rsplit("/", 1)[0] + f"/{database}"
    return await asyncpg.connect(dsn, timeout=5)


async def _create_pg(name: str, password: str, load: Sequence[str] = ()) -> None:
    conn = await _pg_admin()
    try:
        for role in (f"{name}_w", f"{name}_r"):
            await conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        await conn.execute(f"CREATE DATABASE {name} OWNER {name}_w")
    finally:
        await conn.close()
    conn = await _pg_admin(name)
    try:
        await conn.execute(f"SET ROLE {name}_w")
        if load:
            for statement in load:
                await conn.execute(statement)
            await conn.execute("ANALYZE")
            await conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name}_r")
            return
        await conn.execute(
            "CREATE TABLE orders (id int PRIMARY KEY, region text, amount numeric(10, 2), "
            "created_at timestamptz DEFAULT '2026-01-02 03:04:05+00', note text, "
            "tags text[] DEFAULT '{a,b}', payload jsonb DEFAULT '{\"k\": 1}')"
        )
        await conn.executemany(
            "INSERT INTO orders (id, region, amount, note) VALUES ($1, $2, $3, $4)", ROWS
        )
        await conn.execute("CREATE SEQUENCE counter")
        await conn.execute("ANALYZE orders")
        await conn.execute(f"GRANT SELECT ON orders TO {name}_r")
    finally:
        await conn.close()


async def _drop_pg(name: str) -> None:
    conn = await _pg_admin()
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        for role in (f"{name}_w", f"{name}_r"):
            await conn.execute(f"DROP ROLE IF EXISTS {role}")
    finally:
        await conn.close()


async def pg_admin_execute(source: ServerSource, statement: str) -> None:
    """Run a statement as the server's administrator, in the source's database."""
    conn = await _pg_admin(source.database)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


async def pg_count(source: ServerSource, table: str = "orders") -> int:
    """Rows of `table` as the server's administrator sees them (the check that it is intact)."""
    conn = await _pg_admin(source.database)
    try:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))
    finally:
        await conn.close()


async def pg_tables(source: ServerSource) -> list[str]:
    conn = await _pg_admin(source.database)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return sorted(r[0] for r in rows)
    finally:
        await conn.close()


async def _mysql_admin() -> aiomysql.Connection:
    return await aiomysql.connect(
        host=MYSQL_HOST, port=MYSQL_PORT, user="root", password="", autocommit=True
    )


async def mysql_execute(*statements: str) -> list[tuple[object, ...]]:
    """Run statements as MariaDB's root; the last one's rows."""
    conn = await _mysql_admin()
    try:
        rows: list[tuple[object, ...]] = []
        async with conn.cursor() as cursor:
            for statement in statements:
                await cursor.execute(statement)
                rows = list(await cursor.fetchall())
        return rows
    finally:
        conn.close()


async def _create_mysql(name: str, password: str, load: Sequence[str] = ()) -> None:
    await mysql_execute(
        f"CREATE DATABASE {name}",
        f"CREATE USER '{name}_w'@'%' IDENTIFIED BY '{password}'",
        f"CREATE USER '{name}_r'@'%' IDENTIFIED BY '{password}'",
        f"GRANT ALL PRIVILEGES ON {name}.* TO '{name}_w'@'%'",
        f"GRANT SELECT ON {name}.* TO '{name}_r'@'%'",
    )
    if load:
        await mysql_execute(f"USE {name}", *load)
        return
    await mysql_execute(
        f"CREATE TABLE {name}.orders (id int PRIMARY KEY, region varchar(20), "
        "amount decimal(10, 2), created_at timestamp DEFAULT '2026-01-02 03:04:05', "
        "note text, payload json)",
        f"INSERT INTO {name}.orders (id, region, amount, note) VALUES "
        + ", ".join(f"({i}, '{r}', {a}, '{n}')" for i, r, a, n in ROWS),
        f"ANALYZE TABLE {name}.orders",
    )


async def _drop_mysql(name: str) -> None:
    await mysql_execute(
        f"DROP DATABASE IF EXISTS {name}",
        f"DROP USER IF EXISTS '{name}_w'@'%'",
        f"DROP USER IF EXISTS '{name}_r'@'%'",
    )


async def mysql_count(source: ServerSource, table: str = "orders") -> int:
    rows = await mysql_execute(f"SELECT count(*) FROM {source.database}.{table}")
    return int(rows[0][0])  # type: ignore[call-overload]


async def mysql_tables(source: ServerSource) -> list[str]:
    rows = await mysql_execute(
        f"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{source.database}'"
    )
    return sorted(str(r[0]) for r in rows)


def _fail(what: str, where: str, exc: BaseException, start: str) -> None:
    pytest.fail(
        f"{what} is required for the tests of data sources and did not answer at {where} "
        f"({exc}). {start}",
        pytrace=False,
    )


def postgres_source(load: Sequence[str] = ()) -> Iterator[ServerSource]:
    """A fresh PostgreSQL database with the orders table (or what the `load` statements
    make, as its writer), its two roles; dropped after."""
    name, password = _name(), secrets.token_urlsafe(12)
    try:
        asyncio.run(_create_pg(name, password, load))
    except (OSError, asyncpg.PostgresError) as exc:
        _fail("PostgreSQL", POSTGRES_ADMIN_DSN, exc, "Start it (see README, Testing).")
    try:
        yield ServerSource(
            "postgresql", "127.0.0.1", 5432, name, f"{name}_w", f"{name}_r", password
        )
    finally:
        asyncio.run(_drop_pg(name))


def mariadb_source(load: Sequence[str] = ()) -> Iterator[ServerSource]:
    """A fresh MariaDB database with the orders table (or what the `load` statements make),
    its two users; dropped after."""
    name, password = _name(), secrets.token_urlsafe(12)
    try:
        asyncio.run(_create_mysql(name, password, load))
    except Exception as exc:
        _fail(
            "MariaDB",
            f"{MYSQL_HOST}:{MYSQL_PORT} (root, no password)",
            exc,
            "Start it: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd",
        )
    try:
        yield ServerSource(
            "mysql", MYSQL_HOST, MYSQL_PORT, name, f"{name}_w", f"{name}_r", password
        )
    finally:
        asyncio.run(_drop_mysql(name))


def make_files(folder: Path) -> tuple[Path, Path]:
    """orders.db (SQLite) and orders.duckdb in `folder`, each with the orders table."""
    folder.mkdir(parents=True, exist_ok=True)
    lite = folder / "orders.db"
    conn = sqlite3.connect(lite)
    conn.execute(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, region TEXT, amount REAL, note TEXT)"
    )
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ROWS)
    conn.commit()
    conn.close()
    duck = folder / "orders.duckdb"
    con = duckdb.connect(str(duck))
    con.execute(
        "CREATE TABLE orders (id INTEGER, region VARCHAR, amount DECIMAL(10, 2), note VARCHAR)"
    )
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ROWS)
    con.close()
    return lite, duck


def file_count(path: Path, table: str = "orders") -> int:
    if path.suffix == ".duckdb":
        con = duckdb.connect(str(path), read_only=True)
        try:
            return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
        finally:
            con.close()
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()

"""Data sources benchmark, the database half: `sql()` in a sandbox worker against the same
statements in `psql`, on a PostgreSQL table of 10 million rows (issue 25).

Creates a database of its own on this machine's PostgreSQL (trust auth, as in the tests;
`BENCH_POSTGRES_DSN` to point elsewhere), fills `orders` with generate_series, then times,
side by side and each the median of three:

- a group-by (8 rows back) in psql (a process, a connection, the query), and through
  `sql()` in a sandbox worker (the step as the backend saw it: the ask, a connection of
  its own, the query, the rows as Arrow into the worker, a DataFrame there);
- a million rows back, the same two ways;
- the bytes that crossed into the worker against the result's own size (Arrow, in memory);
- ten million rows asked for as a DataFrame: refused at SOURCES_MAX_ROWS, with the
  backend's peak memory growth while it streamed.

With `--mysql`, the same table in this machine's MariaDB (root without a password over
loopback, as in the tests; `BENCH_MYSQL_HOST`/`BENCH_MYSQL_PORT` to point elsewhere) against
the same statements in the `mariadb` client.

    cd backend && uv run python -m benchmarks.sources_db [--rows 10000000] [--mysql]

Run it on a quiet machine: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import resource
import secrets
import statistics
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path

import aiomysql
import asyncpg
import pyarrow as pa

from app.config import Settings
from app.runs.data_sources import SourcesAnswerer
from app.sandbox import SandboxWorker
from app.sandbox.asks import _frames
from app.sources.catalog import SourceCatalog
from app.sources.querying import QueryLimits, SourceConnection, stream_query
from app.sources.reach import Reach
from app.sources.urls import parse

ADMIN_DSN = os.environ.get("BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
MYSQL_HOST = os.environ.get("BENCH_MYSQL_HOST", "127.0.0.1")
MYSQL_PORT = int(os.environ.get("BENCH_MYSQL_PORT", "3306"))
GROUP_BY = (
    "SELECT region, COUNT(*) AS orders, SUM(amount) AS revenue, AVG(amount) AS mean "
    "FROM orders GROUP BY region ORDER BY region"
)
MILLION = "SELECT id, region, amount, placed FROM orders WHERE id <= 1000000"
EVERYTHING = "SELECT id, region, amount, placed FROM orders"
REPEATS = 3


async def create(dsn: str, name: str, rows: int) -> None:
    admin = await asyncpg.connect(dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    conn = await asyncpg.connect(dsn.rsplit("/", 1)[0] + f"/{name}")
    try:
        await conn.execute(
            "CREATE TABLE orders (id bigint PRIMARY KEY, region text NOT NULL, "
            "amount numeric(12,2) NOT NULL, placed date NOT NULL)"
        )
        await conn.execute(
            "INSERT INTO orders SELECT i, 'region-' || (i % 8), (i % 100000) / 100.0, "
            "date '2020-01-01' + (i % 2000)::int FROM generate_series(1, $1::bigint) AS i",
            rows,
        )
        await conn.execute("ANALYZE orders")
        # A role that can only read: the workbench refuses a superuser's connection.
        await conn.execute(f'CREATE ROLE "{name}" LOGIN')
        await conn.execute(f'GRANT SELECT ON orders TO "{name}"')
    finally:
        await conn.close()


async def drop(dsn: str, name: str) -> None:
    admin = await asyncpg.connect(dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'DROP ROLE IF EXISTS "{name}"')
    finally:
        await admin.close()


async def mysql_execute(*statements: str) -> None:
    conn = await aiomysql.connect(
        host=MYSQL_HOST, port=MYSQL_PORT, user="root", password="", autocommit=True
    )
    try:
        async with conn.cursor() as cursor:
            for statement in statements:
                await cursor.execute(statement)
    finally:
        conn.close()


async def create_mysql(name: str, rows: int) -> None:
    await mysql_execute(
        f"CREATE DATABASE {name}",
        f"CREATE TABLE {name}.orders (id bigint PRIMARY KEY, region varchar(20) NOT NULL, "
        "amount decimal(12,2) NOT NULL, placed date NOT NULL)",
        # MariaDB's sequence engine: seq_1_to_<n> is a table of 1…n.
        f"INSERT INTO {name}.orders SELECT seq, CONCAT('region-', seq % 8), "
        f"(seq % 100000) / 100.0, DATE_ADD('2020-01-01', INTERVAL seq % 2000 DAY) "
        f"FROM {name}.seq_1_to_{rows}",
        f"ANALYZE TABLE {name}.orders",
        # A user that can only read: the workbench refuses one with FILE or SUPER.
        f"CREATE USER '{name}'@'%'",
        f"GRANT SELECT ON {name}.* TO '{name}'@'%'",
    )


async def drop_mysql(name: str) -> None:
    await mysql_execute(f"DROP DATABASE IF EXISTS {name}", f"DROP USER IF EXISTS '{name}'@'%'")


def client_seconds(url: str, statement: str) -> float:
    """The statement in the database's own command-line client, every row read."""
    source = parse(url)
    if source.kind == "mysql":
        command = ["mariadb", "-h", MYSQL_HOST, "-P", str(MYSQL_PORT), "-u", source.user or ""]
        command += ["-D", source.database or "", "--quick", "-B", "-N", "-e", statement]
    else:
        command = ["psql", url, "-X", "-q", "-A", "-t", "-c", statement]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def sql_seconds(worker: SandboxWorker, answerer: SourcesAnswerer, statement: str) -> float:
    answerer.queries_left = answerer.per_run  # the benchmark is not one question
    result = worker.run(
        f'df = sql("{statement}", source="bench")\nprint(len(df))', answerer=answerer
    )
    if result.error:
        raise RuntimeError(result.error)
    return result.duration_ms / 1000


async def moved_bytes(connection: SourceConnection, statement: str) -> tuple[int, int, int]:
    """(the result's Arrow size in memory, as a plain Arrow stream with its schema, the
    bytes of the frames that carried it to the worker)."""
    limits = QueryLimits(timeout_seconds=300, max_rows=2**62, max_bytes=2**62)
    batches = [batch async for batch in stream_query(connection, statement, limits)]
    size = sum(batch.nbytes for batch in batches)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batches[0].schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    plain = sink.getvalue().size
    sent = sum(len(base64.b64encode(frame)) for frame in _frames(iter(batches)))
    return size, plain, sent


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10


def main(rows: int, mysql: bool) -> None:
    name = f"wb_bench_{secrets.token_hex(4)}"
    if mysql:
        url, client = f"mysql://{name}@{MYSQL_HOST}:{MYSQL_PORT}/{name}", "mariadb"
        setup, teardown = create_mysql(name, rows), partial(drop_mysql, name)
    else:
        server = ADMIN_DSN.rsplit("/", 1)[0].split("@", 1)[-1]
        url, client = f"postgresql://{name}@{server}/{name}", "psql"
        setup, teardown = create(ADMIN_DSN, name, rows), partial(drop, ADMIN_DSN, name)
    settings = Settings()
    start = time.perf_counter()
    try:
        asyncio.run(setup)
        print(f"{rows:,} rows in {client} in {time.perf_counter() - start:.1f} s (not timed below)")
        connection = SourceConnection(name="bench", url=parse(url), reach=Reach.of(settings))
        kind = "mysql" if mysql else "postgresql"
        catalog = SourceCatalog("bench", kind, "", None, "ready", [], False)
        answerer = SourcesAnswerer({"bench": connection}, [catalog], settings)
        with tempfile.TemporaryDirectory(prefix="bench-sources-") as tmp:
            worker = SandboxWorker(Path(tmp))
            worker.start()
            try:
                capped(worker, answerer, rows, settings)
                report(worker, answerer, connection, url, client)
            finally:
                worker.close()
    finally:
        asyncio.run(teardown())


def report(
    worker: SandboxWorker,
    answerer: SourcesAnswerer,
    connection: SourceConnection,
    url: str,
    client: str,
) -> None:
    print(f"{'':<34} {client:>9} {'sql()':>9} {'ratio':>7}")
    for label, statement in (
        ("group-by over all rows (8 back)", GROUP_BY),
        ("1,000,000 rows back", MILLION),
    ):
        direct = statistics.median(client_seconds(url, statement) for _ in range(REPEATS))
        through = statistics.median(
            sql_seconds(worker, answerer, statement) for _ in range(REPEATS)
        )
        print(f"{label:<34} {direct:8.2f}s {through:8.2f}s {through / direct:6.2f}x")
    for label, statement in (("group-by", GROUP_BY), ("1,000,000 rows", MILLION)):
        size, plain, sent = asyncio.run(moved_bytes(connection, statement))
        print(
            f"bytes into the worker, {label:<15} {sent:>11,} for a result of {size:>11,} in "
            f"memory ({sent / size:.2f}x), {plain:,} as an Arrow stream ({sent / plain:.2f}x)"
        )


def capped(worker: SandboxWorker, answerer: SourcesAnswerer, rows: int, settings: Settings) -> None:
    """Every row asked for as a DataFrame: stopped at the cap, the backend's memory flat."""
    before = peak_rss()
    answerer.queries_left = answerer.per_run
    start = time.perf_counter()
    result = worker.run(f'df = sql("{EVERYTHING}", source="bench")', answerer=answerer)
    seconds = time.perf_counter() - start
    growth = max(0, peak_rss() - before)
    said = (result.error or "no error").splitlines()[-1][:160]
    print(
        f"{rows:,} rows as a DataFrame (cap {settings.SOURCES_MAX_ROWS:,}): stopped after "
        f"{seconds:.1f} s, backend peak memory +{growth >> 20} MB\n  the agent is told: {said}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--mysql", action="store_true", help="MariaDB instead of PostgreSQL")
    arguments = parser.parse_args()
    main(arguments.rows, arguments.mysql)

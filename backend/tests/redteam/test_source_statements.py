"""The agent's SQL is hostile: every statement here tries to write, lock, read or run the
server's files, reach other sessions or outlast its bounds, on a real PostgreSQL and MariaDB
(as a role that CAN write, so only the workbench's own layers stop it) and on SQLite and
DuckDB files. Each must be refused (by the parser, or by the database's read-only layers
under it) with the table intact; the layers under the parser are also attacked directly.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import duckdb
import pytest

from app.sources.drivers import open_session
from app.sources.drivers.duckdb_file import open_read_only as open_duckdb
from app.sources.drivers.sqlite import open_read_only as open_sqlite
from app.sources.querying import QueryFailed, QueryLimits, QueryRefused
from app.sources.statements import check_query
from app.sources.urls import SourceKind
from tests.sources.engine import collect, connection, run
from tests.support import source_databases as dbs
from tests.support.source_databases import ORDERS, ServerSource

MARKER = "/tmp/wb-src-redteam"

POSTGRES = [
    "DELETE FROM orders",
    "UPDATE orders SET amount = 0",
    "TRUNCATE orders",
    "DROP TABLE orders",
    "CREATE TABLE stolen (i int)",
    "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d",
    "WITH u AS (UPDATE orders SET amount = 0 RETURNING 1) SELECT 1",
    "SELECT * INTO stolen FROM orders",
    "SELECT * FROM orders FOR UPDATE",
    "SELECT * FROM orders FOR SHARE",
    "SELECT (SELECT id FROM orders LIMIT 1 FOR UPDATE)",
    "SELECT 1; DELETE FROM orders",
    "BEGIN; DELETE FROM orders; COMMIT",
    f"COPY orders TO PROGRAM 'touch {MARKER}'",
    f"COPY orders TO '{MARKER}'",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_catalog.pg_read_binary_file('/etc/passwd')",
    "SELECT * FROM pg_ls_dir('.')",
    "SELECT pg_stat_file('/etc/passwd')",
    "SELECT lo_import('/etc/passwd')",
    f"SELECT lo_export(1, '{MARKER}')",
    "SELECT dblink_exec('dbname=postgres', 'DROP TABLE orders')",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SET default_transaction_read_only = off",
    "SELECT pg_terminate_backend(pg_backend_pid())",
    "SELECT pg_cancel_backend(1)",
    "SELECT pg_reload_conf()",
    "SELECT pg_advisory_lock(1)",
    "SELECT pg_try_advisory_xact_lock(1)",
    "SELECT nextval('counter')",
    "SELECT setval('counter', 100)",
    "SELECT pg_sleep(3600)",
    "SELECT pg_sleep_for('1 hour')",
    "SELECT query_to_xml('DELETE FROM orders RETURNING 1', true, true, '')",
    "SELECT pg_notify('ch', 'x')",
    "EXPLAIN ANALYZE DELETE FROM orders",
    "DO $$ BEGIN DELETE FROM orders; END $$",
    "PREPARE p AS DELETE FROM orders",
    "LOCK TABLE orders",
    "VACUUM orders",
    "GRANT ALL ON orders TO PUBLIC",
    "CALL p()",
    "",
    # The server's identity: where it is, its files (analysis code is never given a host).
    "SELECT inet_server_addr()",
    "SELECT inet_server_port()",
    "SELECT inet_client_addr(), inet_client_port()",
    "SELECT current_setting('data_directory')",
    "SELECT current_setting('listen_addresses')",
    "SELECT current_setting(name) FROM (SELECT 'port' AS name) s",
    "SELECT setting FROM pg_settings WHERE name = 'port'",
    "SELECT client_addr FROM pg_catalog.pg_stat_activity",
    "SELECT pg_current_logfile()",
]
MYSQL = [
    "DELETE FROM orders",
    "REPLACE INTO orders (id) VALUES (1)",
    "INSERT INTO orders (id) VALUES (1000)",
    "TRUNCATE orders",
    "DROP TABLE orders",
    "CREATE TABLE stolen (i int)",
    "RENAME TABLE orders TO o2",
    "SELECT 1; DROP TABLE orders",
    f"SELECT * FROM orders INTO OUTFILE '{MARKER}'",
    f"SELECT * INTO DUMPFILE '{MARKER}' FROM orders",
    "SELECT 1 INTO @stolen",
    "SELECT LOAD_FILE('/etc/passwd')",
    "SELECT GET_LOCK('a', 1)",
    "SELECT SLEEP(3600)",
    "SELECT BENCHMARK(1000000000, MD5('a'))",
    "SELECT * FROM orders FOR UPDATE",
    "SELECT * FROM orders LOCK IN SHARE MODE",
    "SELECT 1 /*!; DROP TABLE orders */",
    "SELECT 1 /*M!100000 , SLEEP(100) */",
    "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE orders",
    "HANDLER orders OPEN",
    "SET GLOBAL max_connections = 1",
    "DO SLEEP(100)",
    "CALL p()",
    "START TRANSACTION; DELETE FROM orders; COMMIT",
    "SELECT @@hostname",
    "SELECT @@datadir",
    "SELECT @@basedir",
    "SELECT @@tmpdir",
    "SELECT @@socket",
    "SELECT @@port",
    "SELECT @@pid_file",
    "SELECT @@general_log_file",
    "SELECT @@GLOBAL.log_error",
    "SELECT @@session.bind_address",
    "SELECT @@server_uuid",
    "SELECT USER()",
    "SELECT UUID()",
    "SELECT * FROM performance_schema.global_variables",
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
    "WHERE VARIABLE_NAME = 'HOSTNAME'",
    "SELECT HOST FROM information_schema.PROCESSLIST",
]
SQLITE = [
    "DELETE FROM orders",
    "INSERT INTO orders (id) VALUES (1000)",
    "DROP TABLE orders",
    "CREATE TABLE stolen (i)",
    f"VACUUM INTO '{MARKER}.db'",
    f"ATTACH DATABASE '{MARKER}.db' AS other",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = delete",
    f"SELECT load_extension('{MARKER}')",
    "SELECT readfile('/etc/passwd')",
    f"SELECT writefile('{MARKER}', 'x')",
    "SELECT 1; DELETE FROM orders",
    "REINDEX",
    "ANALYZE",
]
DUCKDB = [
    "SELECT * FROM read_text('/proc/self/environ')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM glob('/etc/*')",
    f"ATTACH '{MARKER}.duckdb'",
    f"COPY orders TO '{MARKER}.csv'",
    f"EXPORT DATABASE '{MARKER}'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SELECT * FROM query('DELETE FROM orders')",
    "SELECT getenv('HOME')",
    "DELETE FROM orders",
    "CREATE TABLE stolen AS SELECT 1",
    "SELECT 1; DELETE FROM orders",
    "SELECT * FROM parquet_kv_metadata('/etc/passwd')",
    "SELECT * FROM parquet_metadata('/etc/passwd')",
    "SELECT * FROM parquet_schema('/etc/passwd')",
    "SELECT * FROM parquet_file_metadata('/etc/passwd')",
    "SELECT * FROM read_json_objects_auto('/etc/passwd')",
    "SELECT * FROM read_json_objects('/etc/passwd')",
    "SELECT * FROM read_ndjson_objects('/etc/passwd')",
    "SELECT json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
    "SELECT * FROM duckdb_settings()",
    "SELECT current_setting('home_directory')",
    "SELECT path FROM duckdb_databases()",
    "SELECT * FROM pragma_database_list",
]


def _refused(source: object, sql: str) -> None:
    with pytest.raises((QueryRefused, QueryFailed)):
        run(collect(source, sql))  # type: ignore[arg-type]
    assert not Path(MARKER).exists() and not Path(f"{MARKER}.db").exists()


@pytest.mark.parametrize("sql", POSTGRES)
def test_hostile_statements_on_postgresql_are_refused(pg_source: ServerSource, sql: str) -> None:
    _refused(connection(pg_source.url()), sql)
    assert run(dbs.pg_count(pg_source)) == ORDERS
    assert run(dbs.pg_tables(pg_source)) == ["orders"]


@pytest.mark.parametrize("sql", MYSQL)
def test_hostile_statements_on_mariadb_are_refused(mysql_source: ServerSource, sql: str) -> None:
    _refused(connection(mysql_source.url()), sql)
    assert run(dbs.mysql_count(mysql_source)) == ORDERS
    assert run(dbs.mysql_tables(mysql_source)) == ["orders"]


@pytest.mark.parametrize("sql", SQLITE)
def test_hostile_statements_on_sqlite_are_refused(
    source_files: tuple[Path, Path], sql: str
) -> None:
    lite, _ = source_files
    _refused(connection(f"sqlite:///{lite}", lite.parent), sql)
    assert dbs.file_count(lite) == ORDERS


@pytest.mark.parametrize("sql", DUCKDB)
def test_hostile_statements_on_duckdb_are_refused(
    source_files: tuple[Path, Path], sql: str
) -> None:
    _, duck = source_files
    _refused(connection(f"duckdb:///{duck}", duck.parent), sql)
    assert dbs.file_count(duck) == ORDERS


@pytest.mark.parametrize(
    ("kind", "sql"),
    [(SourceKind.postgresql, s) for s in POSTGRES]
    + [(SourceKind.mysql, s) for s in MYSQL if "LOAD DATA" not in s]
    + [(SourceKind.sqlite, s) for s in SQLITE]
    + [(SourceKind.duckdb, s) for s in DUCKDB],
)
def test_the_parser_alone_refuses_each_before_any_connection(kind: SourceKind, sql: str) -> None:
    with pytest.raises(QueryRefused):
        check_query(sql, kind, timeout_seconds=30)


# -- the layers under the parser, attacked directly -------------------------------------------


def _direct(source: object, sql: str) -> None:
    """`sql` through a driver's session, past the parser: the database must refuse it."""

    async def attempt() -> None:
        session = await open_session(source)  # type: ignore[arg-type]
        try:
            async for _ in session.chunks(sql, 10, 100):
                pass
        finally:
            await session.close()

    with pytest.raises(QueryFailed):
        run(attempt())


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders RETURNING id",
        "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d",
        "SELECT nextval('counter')",
        "CREATE TABLE stolen AS SELECT 1",
        "SELECT 1; DELETE FROM orders",
    ],
)
def test_postgresql_read_only_transaction_stops_what_the_parser_would_miss(
    pg_source: ServerSource, sql: str
) -> None:
    _direct(connection(pg_source.url()), sql)
    assert run(dbs.pg_count(pg_source)) == ORDERS
    assert run(dbs.pg_tables(pg_source)) == ["orders"]


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT 1) TO PROGRAM 'touch {MARKER}' --",
        f"SELECT 1) TO '{MARKER}' --",
        f"SELECT 1 --\n) TO PROGRAM 'touch {MARKER}'; COPY (SELECT 1",
        f"SELECT 1; COPY orders TO PROGRAM 'touch {MARKER}'",
        f"SELECT 1); COPY orders TO '{MARKER}'; SELECT (1",
        f"WITH x AS (SELECT 1) SELECT * FROM x) TO PROGRAM 'touch {MARKER}' --",
        # PostgreSQL nests comments where the parser above may not: all one comment.
        f"SELECT 1 /* /* */ ) TO PROGRAM 'touch {MARKER}' -- */",
        f"SELECT E'\\') TO PROGRAM ''touch {MARKER}'' --'",
        f"SELECT $q$ ) TO PROGRAM 'touch {MARKER}' $q$",
        "SELECT 1 /*",
        "SELECT 'open",
        'SELECT 1 AS "open',
        "SELECT $$",
    ],
)
def test_nothing_escapes_the_copy_around_a_query_even_for_a_superuser(
    pg_source: ServerSource, sql: str
) -> None:
    """Results are read with COPY (<query>) TO STDOUT: text written to close that and
    append TO PROGRAM or TO 'file' is, past the parser and the role check, either a
    syntax error or part of the query, even for a role that could run programs."""
    superuser = connection(f"postgresql://postgres@127.0.0.1:5432/{pg_source.database}")

    async def attempt() -> None:
        session = await open_session(superuser)
        try:
            async for _ in session.chunks(sql, 10, 100):
                pass
        finally:
            await session.close()

    try:
        run(attempt())
    except QueryFailed as exc:
        assert "PostgreSQL" in str(exc)
    assert not Path(MARKER).exists()
    assert run(dbs.pg_count(pg_source)) == ORDERS


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders",
        "INSERT INTO orders (id) VALUES (1000)",
        # DDL commits implicitly and would run outside any transaction: the session's
        # transactions are read-only too.
        "CREATE TABLE stolen (i int)",
        "DROP TABLE orders",
        "SELECT 1; DELETE FROM orders",
    ],
)
def test_mariadb_read_only_session_stops_what_the_parser_would_miss(
    mysql_source: ServerSource, sql: str
) -> None:
    _direct(connection(mysql_source.url()), sql)
    assert run(dbs.mysql_count(mysql_source)) == ORDERS
    assert run(dbs.mysql_tables(mysql_source)) == ["orders"]


@pytest.mark.parametrize(
    "sql",
    [
        f"VACUUM INTO '{MARKER}.db'",
        f"ATTACH DATABASE '{MARKER}.db' AS other",
        "PRAGMA writable_schema = 1",
        "PRAGMA journal_mode = delete",
        f"SELECT load_extension('{MARKER}')",
        "DELETE FROM orders",
        "CREATE TABLE stolen (i)",
        "BEGIN IMMEDIATE",
    ],
)
def test_sqlite_authorizer_refuses_without_the_parser(
    source_files: tuple[Path, Path], sql: str
) -> None:
    lite, _ = source_files
    conn = open_sqlite(lite)
    try:
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute(sql).fetchall()
    finally:
        conn.close()
    assert not Path(f"{MARKER}.db").exists()
    assert dbs.file_count(lite) == ORDERS


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_text('/proc/self/environ')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        f"ATTACH '{MARKER}.duckdb'",
        f"COPY orders TO '{MARKER}.csv'",
        "INSTALL httpfs",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "DELETE FROM orders",
    ],
)
def test_duckdb_configuration_refuses_without_the_parser(
    source_files: tuple[Path, Path], sql: str
) -> None:
    _, duck = source_files
    conn = open_duckdb(duck)
    try:
        with pytest.raises(duckdb.Error):
            conn.execute(sql).fetchall()
    finally:
        conn.close()
    assert not Path(f"{MARKER}.csv").exists()
    assert dbs.file_count(duck) == ORDERS


def test_a_superuser_or_file_reading_role_is_refused(pg_source: ServerSource) -> None:
    """The tests' administrator (a superuser, trusted on loopback) is not used."""
    superuser = connection(f"postgresql://postgres@127.0.0.1:5432/{pg_source.database}")
    with pytest.raises(QueryFailed, match="superuser"):
        run(collect(superuser, "SELECT 1"))


def test_a_mariadb_user_with_file_privilege_is_refused(mysql_source: ServerSource) -> None:
    root = connection(f"mysql://root@127.0.0.1:3306/{mysql_source.database}")
    with pytest.raises(QueryFailed, match="FILE"):
        run(collect(root, "SELECT 1"))


# -- bounds: time, rows, bytes, unreachable servers --------------------------------------------

SHORT = QueryLimits(timeout_seconds=1, max_rows=1000, max_bytes=1024**2)
SLOW = {
    "postgresql": "SELECT count(*) FROM generate_series(1, 100000000000)",
    "mysql": "SELECT count(*) FROM information_schema.COLUMNS a, information_schema.COLUMNS b, "
    "information_schema.COLUMNS c",
}


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_a_slow_query_is_stopped_by_the_timeout(
    kind: str, pg_source: ServerSource, mysql_source: ServerSource
) -> None:
    source = pg_source if kind == "postgresql" else mysql_source
    with pytest.raises(QueryFailed, match="statement timeout"):
        run(collect(connection(source.url()), SLOW[kind], SHORT))


def test_a_slow_query_on_files_is_stopped_by_the_timeout(source_files: tuple[Path, Path]) -> None:
    lite, duck = source_files
    heavy = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    with pytest.raises(QueryFailed, match="statement timeout"):
        run(collect(connection(f"sqlite:///{lite}", lite.parent), heavy, SHORT))
    cross = "SELECT sum(hash(a.range * b.range)) FROM range(1000000) a, range(1000000) b"
    with pytest.raises(QueryFailed, match="statement timeout"):
        run(collect(connection(f"duckdb:///{duck}", duck.parent), cross, SHORT))


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_ten_million_rows_are_capped_with_memory_bounded(pg_source: ServerSource) -> None:
    from app.sources.querying import stream_query

    limits = QueryLimits(timeout_seconds=120, max_rows=3_000_000, max_bytes=1024**3)
    sql = "SELECT g, g * 2 AS twice FROM generate_series(1, 10000000) g"

    async def consume() -> tuple[int, int]:
        start, peak, rows = _rss(), 0, 0
        with pytest.raises(QueryFailed, match="more than 3,000,000 rows"):
            async for batch in stream_query(connection(pg_source.url()), sql, limits):
                rows += batch.num_rows
                peak = max(peak, _rss() - start)
        return rows, peak

    rows, growth = run(consume())
    assert rows == 3_000_000
    # About one batch at a time (50,000 rows of two integers): far below the whole result.
    assert growth < 300 * 1024**2, f"RSS grew by {growth / 1024**2:.0f} MiB"


def test_a_result_past_the_byte_cap_fails_saying_so(mysql_source: ServerSource) -> None:
    limits = QueryLimits(timeout_seconds=60, max_rows=10_000_000, max_bytes=4 * 1024**2)
    sql = (
        "SELECT a.COLUMN_NAME, REPEAT('x', 200) AS padding "
        "FROM information_schema.COLUMNS a, information_schema.COLUMNS b"
    )
    with pytest.raises(QueryFailed, match="larger than 4 MiB"):
        run(collect(connection(mysql_source.url()), sql, limits))


def test_stopping_early_closes_the_connection_at_once(pg_source: ServerSource) -> None:
    from app.sources.querying import stream_query

    async def first_batch_then_stop() -> int:
        source = connection(pg_source.url())
        stream = stream_query(
            source,
            "SELECT g FROM generate_series(1, 10000000) g",
            QueryLimits(60, 10**8, 10**10),
            10_000,
        )
        batch = await anext(stream)
        await stream.aclose()
        return batch.num_rows

    assert run(first_batch_then_stop()) == 10_000

    async def backends() -> int:
        conn = await dbs._pg_admin()
        try:
            for _ in range(50):  # the server ends the backend just after the socket closes
                count = await conn.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 "
                    "AND application_name = 'workbench'",
                    pg_source.database,
                )
                if count == 0:
                    return 0
                await asyncio.sleep(0.1)
            return int(count)
        finally:
            await conn.close()

    assert run(backends()) == 0


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_a_closed_port_a_wrong_login_and_an_unknown_database_answer_with_a_sentence(
    kind: str, pg_source: ServerSource, mysql_source: ServerSource
) -> None:
    """A closed port says it refused the connection (a silent one, or one speaking another
    protocol, say theirs: tests/redteam/test_source_attacks.py); a database that answered
    says it refused the login or has no such database."""
    from tests.support.services import free_port

    source = pg_source if kind == "postgresql" else mysql_source
    base = f"{kind}://{source.writer}:{source.password}@127.0.0.1"
    refusing = r"^127\.0\.0\.1:\d+ refused the connection\.$"
    with pytest.raises(QueryFailed, match=refusing) as refused:
        run(collect(connection(f"{base}:{free_port()}/{source.database}"), "SELECT 1"))
    # This machine's PostgreSQL trusts loopback logins: a user it does not know stands for
    # a wrong password there.
    login = (
        source.url(role="wb_src_nobody", password="not-the-password")
        if kind == "postgresql"
        else source.url(password="not-the-password")
    )
    with pytest.raises(QueryFailed, match="refused the") as wrong:
        run(collect(connection(login), "SELECT 1"))
    with pytest.raises(QueryFailed, match="has no database") as unknown:
        run(collect(connection(f"{base}:{source.port}/wb_src_missing"), "SELECT 1"))
    for said in (str(refused.value), str(wrong.value), str(unknown.value)):
        assert source.password not in said and "not-the-password" not in said

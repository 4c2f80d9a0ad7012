"""MySQL and MariaDB sources through aiomysql: one statement per request (no multi-statement
flag), every query in a READ ONLY transaction (the session's too, so that what commits
implicitly still cannot write) with the server's statement timeout, results streamed with
an unbuffered cursor, its rows cut into Arrow columns off the wire (mysql_rows); roles with
SUPER or FILE refused."""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from collections.abc import AsyncGenerator
from typing import Any

import aiomysql
import pyarrow as pa
import pymysql
from pymysql.constants import CLIENT, FIELD_TYPE, FLAG
from pymysql.converters import convert_timedelta

from app.sources.answers import network_failure
from app.sources.arrow import Column, misfit, parse_text, schema_of, unique_names
from app.sources.catalog import ColumnInfo, Introspection, TableInfo
from app.sources.connection import Access, RoleReport, SourceConnection
from app.sources.drivers.mysql_rows import wire_rows
from app.sources.failures import FailureKind, SourceFailure, scrub, wrong_service
from app.sources.refusals import QueryFailed, timed_out
from app.sources.tls import context_for
from app.sources.urls import Tls

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
# Privileges that only read; any other lets the role change something.
READING = {"SELECT", "USAGE", "SHOW VIEW", "SHOW DATABASES"}
# Privileges that reach the server's files or bypass its limits: the role is not used.
REFUSED = {"SUPER", "FILE"}
_GRANT = re.compile(r"^GRANT (?P<what>.+?)(?: ON (?P<on>.+?))? TO ", re.IGNORECASE)
_TIMEOUT_CODES = {1969, 3024}  # MariaDB max_statement_time, MySQL max_execution_time
_BINARY_CHARSET = 63
_INTEGERS = {FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.INT24, FIELD_TYPE.LONG, FIELD_TYPE.YEAR}
_TEXTS = {
    FIELD_TYPE.VARCHAR,
    FIELD_TYPE.VAR_STRING,
    FIELD_TYPE.STRING,
    FIELD_TYPE.TINY_BLOB,
    FIELD_TYPE.MEDIUM_BLOB,
    FIELD_TYPE.LONG_BLOB,
    FIELD_TYPE.BLOB,
}
_FIXED: dict[int, pa.DataType] = {
    FIELD_TYPE.FLOAT: pa.float32(),
    FIELD_TYPE.DOUBLE: pa.float64(),
    FIELD_TYPE.DATE: pa.date32(),
    FIELD_TYPE.NEWDATE: pa.date32(),
    FIELD_TYPE.DATETIME: pa.timestamp("us"),
    # The session's time zone is UTC, so TIMESTAMP values arrive in UTC.
    FIELD_TYPE.TIMESTAMP: pa.timestamp("us", tz="UTC"),
    FIELD_TYPE.TIME: pa.duration("us"),
    FIELD_TYPE.BIT: pa.binary(),
    FIELD_TYPE.GEOMETRY: pa.binary(),
}


def _column(name: str, field: Any) -> Column:
    """The Arrow column for a result column (a pymysql field)."""
    code = field.type_code
    if code in _INTEGERS:
        return Column(name, pa.int64())
    if code == FIELD_TYPE.LONGLONG:
        return Column(name, pa.uint64() if field.flags & FLAG.UNSIGNED else pa.int64())
    if code in (FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL):
        scale = field.scale
        if field.length <= 38 and scale <= 38:
            return Column(name, pa.decimal128(38, scale))
        return Column(name, pa.decimal256(76, min(scale, 76)))
    if code in _FIXED:
        return Column(name, _FIXED[code])
    if code in _TEXTS and field.charsetnr == _BINARY_CHARSET:
        return Column(name, pa.binary())
    return Column(name, pa.string())


def _arrow(values: pa.Array, column: Column) -> pa.Array:
    """A column's values as the server wrote them (binary) as its Arrow type.

    Raises:
        QueryFailed: a value does not fit the type (the message says to CAST).
    """
    try:
        if pa.types.is_binary(column.type):
            return values.cast(pa.binary())
        text = values.cast(pa.string())
        if pa.types.is_string(column.type):
            return text
        if pa.types.is_duration(column.type):  # TIME, up to ±838:59:59
            times = [None if v is None else convert_timedelta(v) for v in text.to_pylist()]
            return pa.array(times, type=column.type)
        return parse_text(text, column.type)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise misfit(column.name, column.type, str(exc)) from None


def _privileges(text: str) -> list[str]:
    """The privileges a GRANT line lists (column lists dropped), upper-case."""
    flat = re.sub(r"\([^)]*\)", "", text)
    return [p.strip().upper() for p in flat.split(",") if p.strip()]


class MysqlSession:
    """One aiomysql connection to a source (see SourceSession)."""

    def __init__(self, conn: aiomysql.Connection, connection: SourceConnection, timeout: float):
        self.conn = conn
        self.source = connection
        self.timeout = timeout
        self.server_version = str(conn.get_server_info())
        self.mariadb = "mariadb" in self.server_version.lower()

    async def _limit_time(self, seconds: float) -> None:
        if self.mariadb:
            await self._execute(f"SET SESSION max_statement_time = {seconds:.3f}")
        else:
            await self._execute(f"SET SESSION max_execution_time = {math.ceil(seconds * 1000)}")

    async def _execute(self, sql: str) -> None:
        async with self.conn.cursor() as cursor:
            await cursor.execute(sql)

    async def _read(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        await self._limit_time(self.timeout)
        await self._execute("START TRANSACTION READ ONLY")
        try:
            async with self.conn.cursor() as cursor:
                await cursor.execute(sql, args)
                return list(await cursor.fetchall())
        finally:
            await self._execute("ROLLBACK")

    async def _grants(self, of: str | None = None, seen: frozenset[str] = frozenset()) -> list[str]:
        """Every GRANT line of the current user, and of the roles granted to it."""
        lines = [
            str(r[0]) for r in await self._read(f"SHOW GRANTS FOR {of}" if of else "SHOW GRANTS")
        ]
        found = list(lines)
        for line in lines:
            match = _GRANT.match(line)
            if match and match["on"] is None and len(seen) < 8:
                for role in match["what"].split(","):
                    role = role.strip()
                    if role and role not in seen:
                        found += await self._grants(role, seen | {role})
        return found

    async def role(self) -> RoleReport:
        user = self.source.url.user
        privileges: set[str] = set()
        for line in await self._grants():
            match = _GRANT.match(line)
            if match is None or match["on"] is None:
                continue
            granted = set(_privileges(match["what"]))
            if granted & {"ALL", "ALL PRIVILEGES"}:
                granted = {"ALL"} | (REFUSED if match["on"].strip() == "*.*" else set())
            privileges |= granted
        refused = sorted(privileges & REFUSED)
        if refused:
            return RoleReport(
                None,
                "",
                f"The user {user} has the {' and '.join(refused)} privilege: it can read or "
                "write the database server's files, so it is not used. Connect as a user that "
                "can only read (docs/sources.md shows how to make one).",
            )
        if privileges - READING:
            return RoleReport(
                Access.read_only_transaction,
                f"The user {user} can write, so every query runs in a read-only transaction "
                "(read-only by construction); a user that can only read is safer.",
            )
        return RoleReport(Access.read_only_role, f"The user {user} can only read.")

    def _scope(self) -> str:
        if self.source.url.database:
            return "TABLE_SCHEMA = DATABASE()"
        return f"TABLE_SCHEMA NOT IN ({', '.join(repr(s) for s in SYSTEM_SCHEMAS)})"

    async def introspect(self, max_tables: int, max_columns: int) -> Introspection:
        scope = self._scope()
        total = int(
            (await self._read(f"SELECT count(*) FROM information_schema.TABLES WHERE {scope}"))[0][
                0
            ]
        )
        rows = await self._read(
            "SELECT t.TABLE_SCHEMA, t.TABLE_NAME, t.TABLE_TYPE, t.TABLE_ROWS, t.TABLE_COMMENT, "
            "c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE, c.COLUMN_COMMENT "
            "FROM (SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT "
            f"FROM information_schema.TABLES WHERE {scope} "
            "ORDER BY TABLE_SCHEMA, TABLE_NAME LIMIT %s) t "
            "LEFT JOIN information_schema.COLUMNS c "
            "ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME "
            "ORDER BY t.TABLE_SCHEMA, t.TABLE_NAME, c.ORDINAL_POSITION LIMIT %s",
            (max_tables, max_columns + 1),
        )
        tables: dict[tuple[str, str], TableInfo] = {}
        for row in rows[:max_columns]:
            schema, name, kind, estimate, comment, column, type_, nullable, said = row
            view = str(kind).upper() == "VIEW"
            table = tables.setdefault(
                (schema, name),
                TableInfo(
                    schema,
                    name,
                    None if view or estimate is None else int(estimate),
                    [],
                    # A view's TABLE_COMMENT is the word VIEW, not a comment of anyone's.
                    comment="" if view else str(comment or ""),
                ),
            )
            if column is not None:
                table.columns.append(
                    ColumnInfo(column, str(type_), nullable == "YES", comment=str(said or ""))
                )
        truncated = total > len(tables) or len(rows) > max_columns
        return Introspection(list(tables.values()), total, truncated)

    async def chunks(
        self, sql: str, timeout_seconds: float, rows: int
    ) -> AsyncGenerator[pa.RecordBatch, None]:
        secrets = [self.source.url.password]
        try:
            await self._limit_time(timeout_seconds)
            await self._execute("START TRANSACTION READ ONLY")
            cursor = await self.conn.cursor(aiomysql.SSCursor)
            await cursor.execute(sql)
            fields = cursor._result.fields or []
            names = unique_names([f.name for f in fields])
            columns = [_column(n, f) for n, f in zip(names, fields, strict=True)]
            schema = schema_of(columns)
            sent = False
            if fields:  # the rows follow on the connection (an unbuffered cursor's)
                async with contextlib.aclosing(wire_rows(self.conn._reader, len(fields))) as blocks:
                    async for block in blocks:
                        arrays = [_arrow(a, c) for a, c in zip(block, columns, strict=True)]
                        yield pa.RecordBatch.from_arrays(arrays, schema=schema)
                        sent = True
            if not sent:
                yield pa.RecordBatch.from_pylist([], schema=schema)
        except pymysql.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            if code in _TIMEOUT_CODES:
                raise timed_out(timeout_seconds) from None
            message = exc.args[1] if len(exc.args) > 1 else str(exc)
            raise QueryFailed(scrub(f"MySQL: {message}", secrets)) from None

    async def close(self) -> None:
        # Closing ends the read-only transaction (rolled back) and any result still coming.
        self.conn.close()


class _Connection(aiomysql.Connection):  # type: ignore[misc]
    """aiomysql's connection without multi-statements, refusing to send the login when
    TLS is required and the server offers none."""

    def __init__(self, *args: Any, require_tls: bool, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.client_flag &= ~CLIENT.MULTI_STATEMENTS
        self._require_tls = require_tls

    async def _request_authentication(self) -> None:
        if self._require_tls and not self.server_capabilities & CLIENT.SSL:
            raise _NoTls
        await super()._request_authentication()


class _NoTls(Exception):
    pass


async def open_session(connection: SourceConnection) -> MysqlSession:
    url = connection.url
    assert url.host is not None and url.port is not None
    timeout = connection.reach.connect_timeout
    address = await connection.reach.address(url.host, url.port)
    where = f"{url.host}:{url.port}"
    conn = _Connection(
        host=address,
        port=url.port,
        user=url.user,
        password=url.password.reveal(),
        db=url.database,
        charset="utf8mb4",
        connect_timeout=timeout,
        autocommit=True,
        local_infile=False,
        ssl=context_for(url.tls, url.host),
        require_tls=url.tls not in (Tls.disable, Tls.prefer),
    )
    try:
        async with asyncio.timeout(timeout):
            await conn._connect()
            async with conn.cursor() as cursor:
                # What commits implicitly (DDL) starts a transaction that is read-only too.
                await cursor.execute("SET SESSION TRANSACTION READ ONLY")
                await cursor.execute("SET time_zone = '+00:00'")
    except BaseException as exc:
        with contextlib.suppress(Exception):
            conn.close()
        raise await _failure(exc, connection, address, where) from None
    return MysqlSession(conn, connection, timeout)


# pymysql's own error codes (lost connection, bad packet, …): not the server's word.
_CLIENT_CODES = range(2000, 3000)
# Access denied: a wrong password, or a user the server does not know from this host.
_DENIED = (1045, 1698)
PRODUCT = "MySQL or MariaDB"


async def _failure(
    exc: BaseException, connection: SourceConnection, address: str, where: str
) -> BaseException:
    """What a failed connection says: a server's own refusal (wrong password, unknown
    database, TLS) plainly; where no MySQL or MariaDB spoke back, what did
    (app.sources.answers)."""
    url = connection.url
    if not isinstance(exc, Exception):
        return exc  # cancelled: on its way
    if isinstance(exc, _NoTls):
        return SourceFailure(
            FailureKind.tls,
            f"MySQL at {where} does not offer TLS, which the URL requires "
            f"(ssl_mode={url.tls.value}).",
        )
    cause = exc.__cause__ or exc.__context__
    wrapped = isinstance(exc, pymysql.OperationalError) and exc.args and exc.args[0] == 2003
    # aiomysql wraps the network's own error (2003): say what it was.
    if wrapped and cause is not None:
        exc = cause
    assert url.port is not None
    network = await network_failure(
        exc, address, url.port, where, PRODUCT, connection.reach.connect_timeout
    )
    if network is not None:
        return network
    code = exc.args[0] if isinstance(exc, pymysql.MySQLError) and exc.args else None
    said = scrub(str(exc.args[1] if len(exc.args) > 1 else exc), [url.password])
    if not isinstance(code, int) or code in _CLIENT_CODES:
        return wrong_service(where, PRODUCT, f"{where}: {type(exc).__name__}: {code} {said}")
    if code in _DENIED:
        return SourceFailure(
            FailureKind.wrong_password,
            f"MySQL at {where} refused the password of {url.user}: {said}",
        )
    if code in (1044, 1049):
        return SourceFailure(
            FailureKind.unknown_database,
            f"MySQL at {where} has no database {url.database!r} for {url.user}: {said}",
        )
    if code == 3159 or "secure transport" in said:
        return SourceFailure(
            FailureKind.tls, f"MySQL at {where} needs TLS: add ?ssl_mode=REQUIRED ({said})"
        )
    return SourceFailure(FailureKind.other, f"MySQL at {where}: {said}")

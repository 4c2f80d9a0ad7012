"""PostgreSQL sources through asyncpg: every statement in a READ ONLY transaction with a
statement timeout, rolled back; results streamed with COPY (app.sources.drivers.
postgres_copy); superusers and members of the roles that read or run the server's files
refused."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncGenerator
from typing import Any

import asyncpg
import pyarrow as pa

from app.sources.answers import network_failure
from app.sources.catalog import ColumnInfo, Introspection, TableInfo
from app.sources.connection import Access, RoleReport, SourceConnection
from app.sources.drivers.postgres_copy import OUTPUT_SETTINGS, stream_copy
from app.sources.failures import FailureKind, SourceFailure, scrub, wrong_service
from app.sources.refusals import QueryFailed, timed_out
from app.sources.tls import context_for
from app.sources.urls import SourceUrl, Tls

_TABLES = """
    c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
    AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
"""
_COUNT_TABLES = f"""
SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE {_TABLES} AND has_table_privilege(c.oid, 'SELECT')
"""
_SCHEMA = f"""
WITH t AS (
    SELECT c.oid, n.nspname, c.relname, c.relkind, c.reltuples,
           obj_description(c.oid, 'pg_class') AS comment
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE {_TABLES} AND has_table_privilege(c.oid, 'SELECT')
    ORDER BY n.nspname, c.relname LIMIT $1
)
SELECT t.nspname, t.relname, t.relkind, t.reltuples, t.comment, a.attname,
       format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, col_description(t.oid, a.attnum)
FROM t LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY t.nspname, t.relname, a.attnum LIMIT $2
"""
_ROLE = f"""
SELECT r.rolsuper,
       ARRAY(SELECT f.rolname FROM pg_roles f
             WHERE f.rolname IN ('pg_read_server_files', 'pg_write_server_files',
                                 'pg_execute_server_program')
               AND pg_has_role(current_user, f.oid, 'MEMBER') ORDER BY 1),
       r.rolcreaterole OR r.rolcreatedb
         OR EXISTS (SELECT 1 FROM pg_roles w WHERE w.rolname = 'pg_write_all_data'
                    AND pg_has_role(current_user, w.oid, 'MEMBER'))
         OR has_database_privilege(current_database(), 'CREATE')
         OR EXISTS (SELECT 1 FROM pg_namespace n
                    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
                      AND n.nspname NOT LIKE 'pg\\_%' AND has_schema_privilege(n.oid, 'CREATE'))
         OR EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE {_TABLES}
                      AND (has_table_privilege(c.oid, 'INSERT')
                           OR has_table_privilege(c.oid, 'UPDATE')
                           OR has_table_privilege(c.oid, 'DELETE')
                           OR has_table_privilege(c.oid, 'TRUNCATE')))
FROM pg_roles r WHERE r.rolname = current_user
"""


def _estimate(relkind: str, reltuples: float | None) -> int | None:
    # -1 (or 0 for a view): never counted.
    if relkind == "v" or reltuples is None or reltuples < 0 or math.isnan(reltuples):
        return None
    return int(reltuples)


class PostgresSession:
    """One asyncpg connection to a source (see SourceSession)."""

    def __init__(self, conn: asyncpg.Connection, connection: SourceConnection, timeout: float):
        self.conn = conn
        self.source = connection
        self.timeout = timeout
        self.server_version = str(conn.get_settings().server_version)

    async def _read(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        async with self.conn.transaction(readonly=True):
            await self.conn.execute(f"SET LOCAL statement_timeout = {int(self.timeout * 1000)}")
            return list(await self.conn.fetch(sql, *args))

    async def role(self) -> RoleReport:
        user = self.source.url.user
        superuser, file_roles, writes = (await self._read(_ROLE))[0]
        if superuser:
            return RoleReport(
                None,
                "",
                f"The role {user} is a superuser: it can read and run the server's files "
                "whatever a transaction says, so it is not used. Connect as a role that can "
                "only read (docs/sources.md shows how to make one).",
            )
        if file_roles:
            return RoleReport(
                None,
                "",
                f"The role {user} is a member of {', '.join(file_roles)}: it can read or run "
                "the database server's files, so it is not used. Connect as a role that can "
                "only read (docs/sources.md).",
            )
        if writes:
            return RoleReport(
                Access.read_only_transaction,
                f"The role {user} can write, so every query runs in a read-only transaction "
                "(read-only by construction); a role that can only read is safer.",
            )
        return RoleReport(Access.read_only_role, f"The role {user} can only read.")

    async def introspect(self, max_tables: int, max_columns: int) -> Introspection:
        total = int((await self._read(_COUNT_TABLES))[0][0])
        rows = await self._read(_SCHEMA, max_tables, max_columns + 1)
        tables: dict[tuple[str, str], TableInfo] = {}
        for row in rows[:max_columns]:
            schema, name, relkind, reltuples, comment, column, type_, nullable, said = row
            table = tables.setdefault(
                (schema, name),
                TableInfo(schema, name, _estimate(relkind, reltuples), [], comment=comment or ""),
            )
            if column is not None:
                table.columns.append(ColumnInfo(column, type_, bool(nullable), comment=said or ""))
        truncated = total > len(tables) or len(rows) > max_columns
        return Introspection(list(tables.values()), total, truncated)

    async def chunks(
        self, sql: str, timeout_seconds: float, rows: int
    ) -> AsyncGenerator[pa.RecordBatch, None]:
        transaction = self.conn.transaction(readonly=True, isolation="repeatable_read")
        await transaction.start()
        try:
            timeout_ms = max(1, math.ceil(timeout_seconds * 1000))
            await self.conn.execute(
                f"SET LOCAL statement_timeout = {timeout_ms}; "
                + "; ".join(
                    f"SET LOCAL {name} = '{value}'" for name, value in OUTPUT_SETTINGS.items()
                )
            )
            async with contextlib.aclosing(stream_copy(self.conn, sql)) as batches:
                async for batch in batches:
                    yield batch
        except asyncpg.QueryCanceledError:
            raise timed_out(timeout_seconds) from None
        except asyncpg.PostgresError as exc:
            raise QueryFailed(scrub(f"PostgreSQL: {exc}", [self.source.url.password])) from None
        finally:
            # Nothing is ever kept. After a COPY stopped early the connection is mid-query and
            # this fails: closing it (next) ends the transaction all the same.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(transaction.rollback(), 2)

    async def close(self) -> None:
        try:
            await self.conn.close(timeout=2)
        except Exception:
            self.conn.terminate()


def _ssl(tls: Tls, host: str) -> Any:
    if tls is Tls.prefer:
        return "prefer"  # asyncpg's own: TLS if offered, unverified, else plain
    return context_for(tls, host) or False


async def open_session(connection: SourceConnection) -> PostgresSession:
    url = connection.url
    assert url.host is not None and url.port is not None
    timeout = connection.reach.connect_timeout
    address = await connection.reach.address(url.host, url.port)
    where = f"{url.host}:{url.port}"
    try:
        conn = await asyncpg.connect(
            host=address,
            port=url.port,
            user=url.user,
            # Always a string: with None, asyncpg would look in the server's ~/.pgpass.
            password=url.password.reveal(),
            database=url.database or url.user,
            ssl=_ssl(url.tls, url.host),
            timeout=timeout,
            statement_cache_size=0,
            server_settings={
                "application_name": "workbench",
                "default_transaction_read_only": "on",
            },
        )
    except BaseException as exc:
        raise await _failure(exc, connection, address, where) from None
    return PostgresSession(conn, connection, timeout)


def _no_entry(url: SourceUrl, where: str, said: str) -> SourceFailure:
    """pg_hba.conf has no line for this host, user, database and encryption. Only where TLS
    was never tried (sslmode=disable) may TLS be what is missing: with `prefer` asyncpg has
    tried with TLS first (that refusal is the cause of this one) when the server offers it."""
    database = url.database or url.user
    sentence = (
        f"PostgreSQL at {where} does not let {url.user} connect to the database "
        f"{database!r} from the workbench's server (no pg_hba.conf entry allows it)"
    )
    if url.tls is Tls.disable and "no encryption" in said:
        return SourceFailure(
            FailureKind.tls,
            f"{sentence} without TLS: it may allow it with ?sslmode=require. ({said})",
        )
    return SourceFailure(FailureKind.wrong_password, f"{sentence}. ({said})")


async def _failure(
    exc: BaseException, connection: SourceConnection, address: str, where: str
) -> BaseException:
    """What a failed connection says: a database's own refusal (wrong password, unknown
    database, a login pg_hba.conf does not allow) plainly; where no PostgreSQL spoke back,
    what did (app.sources.answers)."""
    url = connection.url
    if not isinstance(exc, Exception):
        return exc  # cancelled: on its way
    said = scrub(str(exc), [url.password])
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return SourceFailure(
            FailureKind.wrong_password,
            f"PostgreSQL at {where} refused the password of {url.user}: {said}",
        )
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return SourceFailure(
            FailureKind.unknown_database,
            f"PostgreSQL at {where} has no database {url.database or url.user!r}: {said}",
        )
    if isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError):
        if "pg_hba.conf" in said:
            return _no_entry(url, where, said)
        return SourceFailure(
            FailureKind.wrong_password, f"PostgreSQL at {where} refused the login: {said}"
        )
    assert url.port is not None
    network = await network_failure(
        exc, address, url.port, where, "PostgreSQL", connection.reach.connect_timeout
    )
    if network is not None:
        return network
    if isinstance(exc, asyncpg.PostgresError) and exc.severity:  # the server's own error
        return SourceFailure(FailureKind.other, f"PostgreSQL at {where}: {said}")
    # asyncpg's own (connection closed, a message it cannot read): not PostgreSQL speaking.
    return wrong_service(where, "PostgreSQL", f"{where}: {type(exc).__name__}: {said}")

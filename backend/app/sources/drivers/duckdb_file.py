"""DuckDB files as sources: opened read-only with external access off (no other file, URL
or extension can be read, installed or loaded) and the configuration locked, so that the
agent's SQL reads the file's tables and nothing else on the server; a statement must be a
single SELECT by DuckDB's own parser too, and is interrupted at the statement timeout."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

import duckdb
import pyarrow as pa

from app.sources.catalog import ColumnInfo, Introspection, TableInfo
from app.sources.connection import Access, RoleReport, SourceConnection
from app.sources.drivers.threaded import in_thread
from app.sources.failures import FailureKind, SourceFailure
from app.sources.refusals import QueryFailed, timed_out

CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "threads": 2,
    "memory_limit": "1GB",
    # Last: nothing above can be changed by a statement afterwards.
    "lock_configuration": True,
}
_SCHEMA = """
SELECT t.schema_name, t.name, t.estimated_size, t.comment, c.column_name, c.data_type,
       c.is_nullable, c.comment
FROM (
    SELECT schema_name, table_name AS name, estimated_size, comment FROM duckdb_tables()
    WHERE NOT internal AND database_name = current_database()
    UNION ALL
    SELECT schema_name, view_name, NULL, comment FROM duckdb_views()
    WHERE NOT internal AND database_name = current_database()
    ORDER BY 1, 2 LIMIT ?
) t LEFT JOIN duckdb_columns() c
  ON c.database_name = current_database() AND c.schema_name = t.schema_name
 AND c.table_name = t.name
ORDER BY t.schema_name, t.name, c.column_index LIMIT ?
"""
_COUNT = """
SELECT (SELECT count(*) FROM duckdb_tables() WHERE NOT internal
        AND database_name = current_database())
     + (SELECT count(*) FROM duckdb_views() WHERE NOT internal
        AND database_name = current_database())
"""


def open_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(path), read_only=True, config=CONFIG)


class DuckdbSession:
    """One DuckDB file, opened read-only (see SourceSession)."""

    server_version = f"DuckDB {duckdb.__version__}"

    def __init__(self, conn: duckdb.DuckDBPyConnection):
        self.conn = conn

    async def role(self) -> RoleReport:
        return RoleReport(
            Access.read_only_file,
            "The file is opened read-only, with access to other files and extensions off.",
        )

    async def introspect(self, max_tables: int, max_columns: int) -> Introspection:
        def read() -> Introspection:
            total = self.conn.execute(_COUNT).fetchone()[0]  # type: ignore[index]
            rows = self.conn.execute(_SCHEMA, [max_tables, max_columns + 1]).fetchall()
            tables: dict[tuple[str, str], TableInfo] = {}
            for row in rows[:max_columns]:
                schema, name, estimate, comment, column, type_, nullable, said = row
                table = tables.setdefault(
                    (schema, name),
                    TableInfo(
                        schema,
                        name,
                        None if estimate is None else int(estimate),
                        [],
                        comment=comment or "",
                    ),
                )
                if column is not None:
                    table.columns.append(
                        ColumnInfo(column, str(type_), bool(nullable), comment=said or "")
                    )
            truncated = total > len(tables) or len(rows) > max_columns
            return Introspection(list(tables.values()), int(total), truncated)

        return await in_thread(read, self.conn.interrupt)

    async def chunks(
        self, sql: str, timeout_seconds: float, rows: int
    ) -> AsyncGenerator[pa.RecordBatch, None]:
        try:
            statements = self.conn.extract_statements(sql)
            if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
                raise QueryFailed("DuckDB: only a single SELECT statement can run on a source.")
            reader = await in_thread(
                lambda: self.conn.sql(sql).to_arrow_reader(rows), self.conn.interrupt
            )
            batch = await in_thread(lambda: _next(reader), self.conn.interrupt)
            yield (
                batch if batch is not None else pa.RecordBatch.from_pylist([], schema=reader.schema)
            )
            while (
                batch := await in_thread(lambda: _next(reader), self.conn.interrupt)
            ) is not None:
                yield batch
        except duckdb.InterruptException:
            raise timed_out(timeout_seconds) from None
        except duckdb.Error as exc:
            raise QueryFailed(f"DuckDB: {exc}") from None

    async def close(self) -> None:
        self.conn.interrupt()
        self.conn.close()


def _next(reader: pa.RecordBatchReader) -> pa.RecordBatch | None:
    try:
        return reader.read_next_batch()
    except StopIteration:
        return None


async def open_session(connection: SourceConnection) -> DuckdbSession:
    path = connection.reach.file(connection.url.database or "")
    try:
        conn = await in_thread(lambda: open_read_only(path), lambda: None)
    except duckdb.Error as exc:
        raise SourceFailure(
            FailureKind.other, f"{connection.url.database} cannot be opened as DuckDB: {exc}."
        ) from None
    return DuckdbSession(conn)

"""SQLite files as sources: opened read-only (`mode=ro`), no database attached, and an
authorizer that allows reading and a list of plain functions and nothing else, so that
VACUUM INTO, ATTACH, PRAGMA writes and load_extension are refused by SQLite itself even if
a statement got past the parser. A progress handler enforces the statement timeout."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from app.sources.arrow import Column, infer_columns, to_batch, unique_names
from app.sources.catalog import ColumnInfo, Introspection, TableInfo
from app.sources.connection import Access, RoleReport, SourceConnection
from app.sources.drivers.threaded import Stopwatch, in_thread
from app.sources.failures import FailureKind, SourceFailure
from app.sources.refusals import QueryFailed, timed_out

# Row counts are taken with count(*) only for files this small; larger ones say None
# unless the file keeps statistics (sqlite_stat1, from ANALYZE).
COUNT_BELOW_BYTES = 64 * 1024**2
_PROGRESS_STEPS = 10_000
_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, _RECURSIVE}
SAFE_FUNCTIONS = frozenset(
    [
        "abs",
        "char",
        "coalesce",
        "concat",
        "concat_ws",
        "format",
        "glob",
        "hex",
        "ifnull",
        "iif",
        "if",
        "instr",
        "length",
        "like",
        "likelihood",
        "likely",
        "lower",
        "ltrim",
        "max",
        "min",
        "nullif",
        "octet_length",
        "printf",
        "quote",
        "random",
        "randomblob",
        "replace",
        "round",
        "rtrim",
        "sign",
        "soundex",
        "sqlite_version",
        "substr",
        "substring",
        "trim",
        "typeof",
        "unhex",
        "unicode",
        "unlikely",
        "upper",
        "zeroblob",
        "avg",
        "count",
        "group_concat",
        "string_agg",
        "sum",
        "total",
        "median",
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
        "date",
        "time",
        "datetime",
        "julianday",
        "unixepoch",
        "strftime",
        "timediff",
        "current_date",
        "current_time",
        "current_timestamp",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "ceil",
        "ceiling",
        "cos",
        "cosh",
        "degrees",
        "exp",
        "floor",
        "ln",
        "log",
        "log10",
        "log2",
        "mod",
        "pi",
        "pow",
        "power",
        "radians",
        "sin",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
        "trunc",
        "json",
        "jsonb",
        "json_array",
        "jsonb_array",
        "json_array_length",
        "json_error_position",
        "json_extract",
        "jsonb_extract",
        "json_insert",
        "jsonb_insert",
        "json_object",
        "jsonb_object",
        "json_patch",
        "jsonb_patch",
        "json_pretty",
        "json_remove",
        "jsonb_remove",
        "json_replace",
        "jsonb_replace",
        "json_set",
        "jsonb_set",
        "json_type",
        "json_valid",
        "json_quote",
        "json_group_array",
        "jsonb_group_array",
        "json_group_object",
        "jsonb_group_object",
        "json_each",
        "json_tree",
        "->",
        "->>",
    ]
)


def authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
    """SQLite's authorizer for the agent's statements: reads, recursive CTEs and the safe
    functions are allowed; everything else (writes, ATTACH, PRAGMA, VACUUM, transactions,
    unknown functions such as load_extension) is denied."""
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in SAFE_FUNCTIONS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def open_read_only(path: Path) -> sqlite3.Connection:
    """The file opened read-only, unable to attach another, with the authorizer set."""
    conn = sqlite3.connect(
        f"file:{quote(str(path))}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
    )
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.set_authorizer(authorize)
    return conn


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SqliteSession:
    """One SQLite file, opened read-only (see SourceSession)."""

    server_version = f"SQLite {sqlite3.sqlite_version}"

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path

    async def role(self) -> RoleReport:
        return RoleReport(
            Access.read_only_file,
            "The file is opened read-only, and SQLite refuses every statement but a read.",
        )

    async def introspect(self, max_tables: int, max_columns: int) -> Introspection:
        return await in_thread(
            lambda: self._introspect(max_tables, max_columns), self.conn.interrupt
        )

    def _introspect(self, max_tables: int, max_columns: int) -> Introspection:
        # The workbench's own statements: a connection without the agent's authorizer.
        conn = sqlite3.connect(f"file:{quote(str(self.path))}?mode=ro", uri=True)
        try:
            listed = (
                "FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
            )
            total = conn.execute(f"SELECT count(*) {listed}").fetchone()[0]
            names = conn.execute(
                f"SELECT name, type {listed} ORDER BY name LIMIT ?", (max_tables,)
            ).fetchall()
            stats = self._stats(conn)
            small = os.path.getsize(self.path) < COUNT_BELOW_BYTES
            tables, columns_left = [], max_columns
            for name, kind in names:
                estimate = stats.get(name)
                if estimate is None and small and kind == "table":
                    estimate = conn.execute(f"SELECT count(*) FROM {_quoted(name)}").fetchone()[0]
                info = conn.execute(
                    'SELECT name, type, "notnull" FROM pragma_table_info(?)', (name,)
                )
                columns = [ColumnInfo(c, t or "", not notnull) for c, t, notnull in info.fetchall()]
                if len(columns) > columns_left:
                    tables.append(TableInfo("main", name, estimate, columns[:columns_left]))
                    return Introspection(tables, total, True)
                columns_left -= len(columns)
                tables.append(TableInfo("main", name, estimate, columns))
            return Introspection(tables, total, total > len(tables))
        finally:
            conn.close()

    @staticmethod
    def _stats(conn: sqlite3.Connection) -> dict[str, int]:
        try:
            rows = conn.execute(
                "SELECT tbl, stat FROM sqlite_stat1 WHERE idx IS NULL OR idx = tbl"
            ).fetchall()
        except sqlite3.Error:
            return {}
        return {
            tbl: int(stat.split()[0]) for tbl, stat in rows if stat and stat.split()[0].isdigit()
        }

    async def chunks(
        self, sql: str, timeout_seconds: float, rows: int
    ) -> AsyncGenerator[pa.RecordBatch, None]:
        watch = Stopwatch(timeout_seconds)
        cursor = self.conn.cursor()
        columns: list[Column] = []

        def step(first: bool) -> list[Any]:
            with watch as deadline:
                self.conn.set_progress_handler(_past(deadline), _PROGRESS_STEPS)
                if first:
                    cursor.execute(sql)
                return cursor.fetchmany(rows)

        try:
            batch = await in_thread(lambda: step(True), self.conn.interrupt)
            names = unique_names([d[0] for d in cursor.description or ()])
            columns = infer_columns(names, batch)
            yield to_batch(columns, batch)
            while batch := await in_thread(lambda: step(False), self.conn.interrupt):
                yield to_batch(columns, batch)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise timed_out(timeout_seconds) from None
            raise QueryFailed(f"SQLite: {exc}") from None
        except sqlite3.Error as exc:
            raise QueryFailed(f"SQLite: {exc}") from None
        finally:
            cursor.close()

    async def close(self) -> None:
        self.conn.close()


def _past(deadline: float) -> Callable[[], int]:
    """A progress handler that stops the statement (non-zero) once `deadline` passed."""
    return lambda: int(time.monotonic() > deadline)


async def open_session(connection: SourceConnection) -> SqliteSession:
    path = connection.reach.file(connection.url.database or "")
    try:
        conn = await in_thread(lambda: open_read_only(path), lambda: None)
        await in_thread(
            lambda: conn.execute("SELECT count(*) FROM sqlite_schema").fetchone(), conn.interrupt
        )
    except sqlite3.Error as exc:
        raise SourceFailure(
            FailureKind.other, f"{connection.url.database} cannot be read as SQLite: {exc}."
        ) from None
    return SqliteSession(conn, path)

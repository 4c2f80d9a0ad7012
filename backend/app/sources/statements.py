"""The first guard on the agent's SQL: parsed (sqlglot, in the source's dialect), exactly
one statement, a query (SELECT, a set operation, VALUES, WITH … SELECT) and nothing in its
whole tree that writes, locks, reaches files, the network or other sessions, or changes
settings.

It is not the only guard (the database's parser and this one can disagree): every query
also runs in a read-only transaction, on a role that is refused when it can read or run
the server's files, with SQLite's authorizer or DuckDB's external access turned off.
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from app.sources import identity
from app.sources.refusals import QueryRefused
from app.sources.urls import SourceKind

DIALECTS = {
    SourceKind.postgresql: "postgres",
    SourceKind.mysql: "mysql",
    SourceKind.sqlite: "sqlite",
    SourceKind.duckdb: "duckdb",
}
# sqlglot logs statements it falls back on parsing loosely; those are refused anyway.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

# Nodes that make a statement more than a read, wherever they appear in the tree.
_WRITES: tuple[type[exp.Expr], ...] = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Command,
    exp.Into,
    exp.Copy,
    exp.Set,
    exp.Pragma,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.LoadData,
    exp.Attach,
    exp.Detach,
    exp.Install,
    exp.Grant,
    exp.Revoke,
    exp.Analyze,
    exp.Cache,
    exp.Uncache,
    exp.Refresh,
    exp.Kill,
    exp.Export,
    exp.Declare,
    exp.Execute,
    exp.Comment,
)
_WHAT = {
    exp.Into: "SELECT … INTO (it writes a table, a file or variables)",
    exp.Lock: "FOR UPDATE / FOR SHARE (it locks rows)",
}

# Functions that read or write the server's files, reach other servers or sessions, take
# locks, change settings or sequences, or run a string as SQL (past this check).
DENIED_FUNCTIONS = frozenset(
    {
        # PostgreSQL
        "pg_read_file",
        "pg_read_binary_file",
        "pg_stat_file",
        "pg_ls_dir",
        "pg_file_write",
        "pg_file_rename",
        "pg_file_unlink",
        "pg_logdir_ls",
        "set_config",
        "nextval",
        "setval",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_switch_wal",
        "pg_promote",
        "pg_notify",
        "pg_sleep_for",
        "pg_sleep_until",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "table_to_xml",
        "table_to_xmlschema",
        "table_to_xml_and_xmlschema",
        "schema_to_xml",
        "schema_to_xmlschema",
        "schema_to_xml_and_xmlschema",
        "database_to_xml",
        "database_to_xmlschema",
        "database_to_xml_and_xmlschema",
        "txid_current",
        "pg_current_xact_id",
        "pg_import_system_collations",
        # MySQL / MariaDB
        "load_file",
        "get_lock",
        "release_lock",
        "release_all_locks",
        "benchmark",
        "master_pos_wait",
        "source_pos_wait",
        "master_gtid_wait",
        "wait_for_executed_gtid_set",
        "wait_until_sql_thread_after_gtids",
        "sys_exec",
        "sys_eval",
        # SQLite
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        # DuckDB
        "read_text",
        "read_blob",
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "parquet_metadata",
        "parquet_schema",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "sniff_csv",
        "glob",
        "query",
        "query_table",
        "getenv",
        "sqlite_scan",
        "sqlite_attach",
        "postgres_scan",
        "postgres_attach",
        "postgres_query",
        "postgres_execute",
        "mysql_query",
        "mysql_execute",
        "iceberg_scan",
        "delta_scan",
        "read_xlsx",
        "json_execute_serialized_sql",
        "duckdb_secrets",
        "which_secret",
        "install_extension",
    }
)
DENIED_PREFIXES = (
    "pg_read_",
    "pg_ls_",
    "pg_file_",
    "pg_advisory",
    "pg_try_advisory",
    "pg_create_",
    "pg_drop_",
    "pg_replication_",
    "pg_logical_",
    "pg_backup_",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_log_backend",
    "pg_signal_",
    "pg_wal_replay",
    "pg_copy_",
    "lo_",
    "dblink",
    # DuckDB's readers and file metadata: read_json_objects_auto, parquet_kv_metadata, …
    "read_",
    "parquet_",
    "json_execute_",
    "iceberg_",
    "delta_",
)
# Sleeps are taken only for a literal time within the statement timeout.
SLEEPS = frozenset({"pg_sleep", "sleep"})
# MySQL runs the inside of /*! … */ (and MariaDB of /*M! … */) as SQL: never seen here.
_EXECUTABLE_COMMENT = re.compile(r"/\*M?!")


def function_name(node: exp.Func) -> str:
    """A function's name as it was written (known ones by sqlglot's name for them)."""
    name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
    return name.lower()


def _denied(name: str) -> bool:
    return name in DENIED_FUNCTIONS or name.startswith(DENIED_PREFIXES)


def _sleep_within(node: exp.Func, timeout_seconds: float) -> bool:
    args = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
    if len(args) != 1 or not isinstance(args[0], exp.Literal) or args[0].is_string:
        return False
    try:
        return float(args[0].this) <= timeout_seconds
    except ValueError:
        return False


def parse_query(sql: str, kind: SourceKind) -> exp.Expr:
    """The one statement `sql` holds, parsed in the dialect of `kind`.

    Raises:
        QueryRefused: it does not parse, or holds no statement or more than one.
    """
    if kind is SourceKind.mysql and _EXECUTABLE_COMMENT.search(sql):
        raise QueryRefused(
            "Executable comments (/*! … */) are not allowed: write the SQL without them."
        )
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECTS[kind]) if s is not None]
    except SqlglotError as exc:
        raise QueryRefused(f"The SQL does not parse ({DIALECTS[kind]} dialect): {exc}") from None
    if len(statements) != 1:
        raise QueryRefused(
            "Send exactly one SQL statement (a SELECT) per query"
            + (f"; this holds {len(statements)}." if statements else "; this holds none.")
        )
    return statements[0]


def check_query(sql: str, kind: SourceKind, timeout_seconds: float) -> None:
    """Refuse `sql` unless it is a single read-only query.

    Args:
        sql: The statement as the agent wrote it.
        kind: The source's kind (its SQL dialect).
        timeout_seconds: The statement timeout: a literal sleep within it is allowed.

    Raises:
        QueryRefused: with a sentence saying what is not allowed.
    """
    root = parse_query(sql, kind)
    while isinstance(root, exp.Subquery):
        root = root.this
    if not isinstance(root, exp.Query | exp.Values):
        raise QueryRefused(
            f"Only queries can run on a source (SELECT, WITH … SELECT, UNION, VALUES), not "
            f"{statement_name(root)}: sources are read-only."
        )
    for node in root.walk():
        _check_node(node, kind, timeout_seconds)


def _check_node(node: exp.Expr, kind: SourceKind, timeout_seconds: float) -> None:
    if isinstance(node, exp.Lock | exp.Into):
        raise QueryRefused(f"{_WHAT[type(node)]} is not allowed: sources are read-only.")
    if isinstance(node, _WRITES):
        raise QueryRefused(
            f"{statement_name(node)} is not allowed inside a query: sources are read-only."
        )
    name = function_name(node) if isinstance(node, exp.Func) else None
    said = identity.refusal(node, kind, name)
    if said is not None:
        raise QueryRefused(said)
    if isinstance(node, exp.Func):
        assert name is not None
        if name in SLEEPS and not _sleep_within(node, timeout_seconds):
            raise QueryRefused(
                f"{name}() is allowed only for a literal number of seconds up to the "
                f"statement timeout ({timeout_seconds:g} s)."
            )
        if _denied(name):
            raise QueryRefused(
                f"The function {name}() is not allowed on a source: it reaches files, other "
                "servers or sessions, locks, or changes state."
            )
    if kind is SourceKind.duckdb and isinstance(node, exp.Table) and _looks_like_a_file(node):
        raise QueryRefused("Reading files by name is not allowed on a source: name a table.")


def _looks_like_a_file(table: exp.Table) -> bool:
    """DuckDB reads `FROM 'x.csv'` (a quoted name) as the file x.csv."""
    name = table.this
    text = name.this if isinstance(name, exp.Identifier | exp.Literal) else ""
    return isinstance(text, str) and any(c in text for c in "/\\:.")


def statement_name(node: exp.Expr) -> str:
    """What a statement is, as its first keyword(s) say (SELECT, DELETE, VACUUM…)."""
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    names = {"truncatetable": "TRUNCATE", "loaddata": "LOAD DATA"}
    return names.get(node.key, node.key.upper())

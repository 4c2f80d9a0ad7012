"""What would tell analysis code where a source's database server is: functions, server
variables and settings, and system tables that name a host, an address, a port, a path on
the server, or the server's own identity. The statement check (app.sources.statements)
refuses a query holding any of them, as it refuses file functions: the agent is never
given a host, and must not read one from the database either.

Variables and settings are judged by name: one whose name speaks of a host, an address, a
port, a socket, a directory, a file, a path, a log or a server's id is refused (so new
ones a server adds are covered too); a setting named by anything but a literal is refused.
"""

from __future__ import annotations

import re

from sqlglot import exp

from app.sources.urls import SourceKind

# Functions that answer with the server's (or the workbench's, as the server sees it)
# address, port, files or identity, on any kind.
FUNCTIONS = frozenset(
    {
        # PostgreSQL
        "inet_server_addr",
        "inet_server_port",
        "inet_client_addr",
        "inet_client_port",
        "pg_current_logfile",
        "pg_tablespace_location",
        "pg_relation_filepath",
        "pg_config",
        "pg_show_all_settings",
        "pg_show_all_file_settings",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
        "pg_stat_get_activity",
        "pg_stat_get_wal_receiver",
        "pg_stat_get_subscription",
        "pg_settings_get_flags",
        # DuckDB
        "duckdb_settings",
        "duckdb_databases",
        "duckdb_extensions",
        "duckdb_temporary_files",
        "duckdb_logs",
    }
)
PREFIXES = ("pg_stat_get_backend_client", "pragma_")
# MySQL's USER() and SESSION_USER() say the workbench's address as the server sees it;
# CURRENT_USER() the account's host pattern; UUID() holds the server's MAC address and
# UUID_SHORT() its server id.
MYSQL_FUNCTIONS = frozenset(
    {"user", "session_user", "system_user", "current_user", "uuid", "uuid_short"}
)
# Functions whose first argument names a setting.
SETTING_FUNCTIONS = frozenset({"current_setting"})

_PLACE = re.compile(
    r"host|addr|network|port|socket|listen|bind|dir|file|path|home|repository|output|log|"
    r"plugin|librar|command|conninfo|cluster|ssl|secure|krb|bonjour|uuid|server_id|pid|wsrep",
    re.IGNORECASE,
)

# System tables and views that list settings, connections (with client addresses),
# replication peers, files or the server's configuration.
POSTGRES_TABLES = frozenset(
    {
        "pg_settings",
        "pg_file_settings",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
        "pg_config",
        "pg_stat_activity",
        "pg_stat_replication",
        "pg_stat_wal_receiver",
        "pg_stat_subscription",
        "pg_subscription",
        "pg_user_mappings",
        "pg_user_mapping",
        "pg_foreign_server",
        "pg_replication_origin_status",
    }
)
# MySQL/MariaDB: every table of these schemas ...
MYSQL_SCHEMAS = frozenset({"performance_schema", "sys", "mysql"})
# ... and these of information_schema.
MYSQL_INFORMATION_TABLES = frozenset(
    {
        "global_variables",
        "session_variables",
        "system_variables",
        "processlist",
        "files",
        "plugins",
        "innodb_datafiles",
        "innodb_sys_datafiles",
        "innodb_tablespaces",
        "innodb_sys_tablespaces",
        "client_statistics",
        "user_statistics",
        "thread_pool_queues",
        "wsrep_membership",
        "wsrep_status",
    }
)

SENTENCE = (
    "{what} is not allowed on a source: it tells where the database server is (a host, an "
    "address, a port or a path), which analysis code is never given."
)


def refusal(node: exp.Expr, kind: SourceKind, function: str | None) -> str | None:
    """Why `node` (`function`: its name, if it is a function) may not run on a source of
    `kind`, or None."""
    if function is not None:
        return _function(node, kind, function)
    if isinstance(node, exp.SessionParameter | exp.Parameter):
        return _variable(node)
    if isinstance(node, exp.Table):
        return _table(node, kind)
    return None


def _function(node: exp.Expr, kind: SourceKind, name: str) -> str | None:
    if name in FUNCTIONS or name.startswith(PREFIXES):
        return SENTENCE.format(what=f"The function {name}()")
    if kind is SourceKind.mysql and name in MYSQL_FUNCTIONS:
        return SENTENCE.format(what=f"The function {name}()")
    if name in SETTING_FUNCTIONS:
        args = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
        first = args[0] if args else None
        if not (isinstance(first, exp.Literal) and first.is_string):
            return f"{name}() takes only a setting's name written as a literal on a source."
        if _PLACE.search(first.this):
            return SENTENCE.format(what=f"The setting {first.this}")
    return None


def _variable(node: exp.SessionParameter | exp.Parameter) -> str | None:
    """MySQL's @@variables (sqlglot: SessionParameter; `@ @x` nests Parameters)."""
    if isinstance(node, exp.Parameter):
        if isinstance(node.this, exp.Parameter):
            return SENTENCE.format(what="A server variable")
        return None
    name = node.name
    if not name or _PLACE.search(name):
        return SENTENCE.format(what=f"The server variable @@{name}")
    return None


def _table(node: exp.Table, kind: SourceKind) -> str | None:
    name, schema = node.name.lower(), node.db.lower()
    if kind is SourceKind.postgresql and name in POSTGRES_TABLES:
        return SENTENCE.format(what=f"The view {name}")
    if kind is SourceKind.mysql and (
        schema in MYSQL_SCHEMAS
        or (schema == "information_schema" and name in MYSQL_INFORMATION_TABLES)
    ):
        return SENTENCE.format(what=f"The table {schema}.{name}")
    if kind is SourceKind.duckdb and (name in FUNCTIONS or name.startswith(PREFIXES)):
        return SENTENCE.format(what=f"The table function {name}")
    return None

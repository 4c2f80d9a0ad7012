"""One module per kind of source, each opening a `SourceSession` (app.sources.connection):
connect, say what the role may do, list the schema, stream a query's rows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app.sources.connection import SourceConnection, SourceSession
from app.sources.drivers import duckdb_file, mysql, postgres, sqlite
from app.sources.urls import SourceKind

_OPENERS: dict[SourceKind, Callable[[SourceConnection], Awaitable[SourceSession]]] = {
    SourceKind.postgresql: postgres.open_session,
    SourceKind.mysql: mysql.open_session,
    SourceKind.sqlite: sqlite.open_session,
    SourceKind.duckdb: duckdb_file.open_session,
}


async def open_session(connection: SourceConnection) -> SourceSession:
    """A session on the source, connected to its checked address (or real file path).

    Raises:
        SourceFailure: it cannot be reached, with a sentence saying why.
    """
    return await _OPENERS[connection.kind](connection)

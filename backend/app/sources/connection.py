"""`SourceConnection`: one source, decrypted and ready to connect, as the query engine and
the checks take it; what a driver's open session offers (`SourceSession`); and how a
source's role makes it read-only (`Access`, `RoleReport`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import pyarrow as pa

from app.sources.catalog import Introspection
from app.sources.reach import Reach
from app.sources.urls import SourceKind, SourceUrl


class Access(StrEnum):
    """How a source is kept read-only."""

    read_only_role = "read_only_role"  # its role can only read
    read_only_transaction = "read_only_transaction"  # it can write: every query is read-only
    read_only_file = "read_only_file"  # a file opened read-only, with writes refused


@dataclass(frozen=True)
class RoleReport:
    """What a source's role may do: `refusal` is a sentence when it must not be used."""

    access: Access | None
    detail: str
    refusal: str | None = None


@dataclass(frozen=True)
class SourceConnection:
    """The decrypted, ready-to-connect form of one source.

    `url` holds the host, port, user, password (a Secret: masked in repr()), database or
    file path, and TLS mode; `reach` resolves and checks the host's address (or the
    file's real path) at each connection, and the connection goes to that address.
    """

    name: str
    url: SourceUrl
    reach: Reach

    @property
    def kind(self) -> SourceKind:
        return self.url.kind


class SourceSession(Protocol):
    """An open connection to one source (one per check or query, never pooled)."""

    server_version: str

    async def role(self) -> RoleReport:
        """What the connected role may do (file sources: opened read-only)."""
        ...

    async def introspect(self, max_tables: int, max_columns: int) -> Introspection:
        """The tables and views the role can read, with their columns and row estimates,
        cut at `max_tables` tables and `max_columns` columns."""
        ...

    def chunks(
        self, sql: str, timeout_seconds: float, rows: int
    ) -> AsyncGenerator[pa.RecordBatch, None]:
        """The result of `sql` (already checked) in record batches of one schema (at least
        one, maybe empty), inside a read-only transaction with the database's own statement
        timeout. A driver that fetches rows asks for `rows` at a time; PostgreSQL's batches
        are blocks of its COPY output, of any size (stream_query regroups them)."""
        ...

    async def close(self) -> None: ...

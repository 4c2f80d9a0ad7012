"""A run's answers to its code's asks for data: the project's data sources, queried with the
backend's credentials under the run's limits (`sql()`, `tables()`, `columns()`; see
app/sandbox/asks.py for the channel).

The agent runs in a thread of its own (app/runs/agent_thread.py) and so does this: each
query gets an event loop of its own in that thread for its one connection, which is closed
when the query ends, fails or is stopped. Nothing here holds a connection between queries.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pyarrow as pa

from app.config import Settings
from app.sandbox import AskRefused, QueryRecord
from app.sources.catalog import SourceCatalog, TableInfo
from app.sources.querying import (
    QueryFailed,
    QueryLimits,
    QueryRefused,
    SourceConnection,
    stream_query,
)

# Time a query leaves the step to take its rows and end (the step's own limit kills it).
STEP_MARGIN_SECONDS = 2.0


class SourcesAnswerer:
    """The `DataAnswerer` of one run (see app.sandbox.asks)."""

    def __init__(
        self,
        connections: dict[str, SourceConnection],
        catalog: list[SourceCatalog],
        settings: Settings,
        spent: int = 0,
    ) -> None:
        """Answer a run's asks.

        Args:
            connections: The usable sources by name (app.sources.service.connections_of).
            catalog: Every source of the project with its cached tables (catalog_of).
            settings: The limits of a query and of a run (SOURCES_*).
            spent: The queries the run ran before (it waited for the user, and goes on):
                the budget is the question's, not one of each stretch of it.
        """
        self.connections = connections
        self.catalog = {source.name: source for source in catalog}
        self.timeout = settings.SOURCES_QUERY_TIMEOUT_SECONDS
        self.max_rows = settings.SOURCES_MAX_ROWS
        self.max_bytes = settings.SOURCES_MAX_RESULT_MB << 20
        self.per_run = settings.SOURCES_QUERIES_PER_RUN
        self.queries_left = self.per_run - spent
        self.records: list[QueryRecord] = []

    def query(
        self, sql: str, source: str | None, room: int | None, deadline: float
    ) -> Iterator[pa.RecordBatch]:
        name = self._name(source)
        connection = self.connections.get(name)
        if connection is None:
            status = self.catalog[name].status
            raise AskRefused(
                f"the source {name!r} cannot be queried now (its last check: {status}); "
                "check it in the project's Sources panel"
            )
        if self.queries_left <= 0:
            raise AskRefused(
                f"this question has run its {self.per_run} queries (SOURCES_QUERIES_PER_RUN): "
                "combine queries (joins, GROUP BY) or answer with what you have"
            )
        left = deadline - time.monotonic() - STEP_MARGIN_SECONDS
        if left <= 0:
            raise AskRefused("the step has no time left for a query: run it in the next step")
        # Counted as the run's steps keep it (each query that runs is recorded).
        self.queries_left -= 1
        limits = QueryLimits(
            timeout_seconds=max(0.1, min(self.timeout, left)),
            max_rows=self.max_rows if room is None else 2**62,
            max_bytes=self.max_bytes if room is None else room,
        )
        return self._rows(connection, sql, limits)

    def _rows(
        self, connection: SourceConnection, sql: str, limits: QueryLimits
    ) -> Iterator[pa.RecordBatch]:
        """The query's batches, each read from the database when it is asked for."""
        started, rows, error = time.monotonic(), 0, None
        loop = asyncio.new_event_loop()
        batches: AsyncIterator[pa.RecordBatch] = stream_query(connection, sql, limits)
        try:
            while True:
                try:
                    batch = loop.run_until_complete(anext(batches))
                except StopAsyncIteration:
                    return
                rows += batch.num_rows
                yield batch
        except (QueryRefused, QueryFailed) as exc:
            error = str(exc)
            raise AskRefused(error) from None
        finally:
            with contextlib.suppress(Exception):  # the connection closes, whatever happened
                loop.run_until_complete(batches.aclose())  # type: ignore[attr-defined]
            loop.close()
            duration = round((time.monotonic() - started) * 1000)
            self.records.append(QueryRecord(connection.name, sql, rows, duration, error))

    def lookup(self, what: str, source: str | None, table: str | None) -> list[dict[str, Any]]:
        catalog = self.catalog[self._name(source)]
        if what == "tables":
            return [
                {
                    "table": _qualified(t),
                    "rows": t.row_estimate,
                    "columns": len(t.columns),
                    "description": t.description,
                }
                for t in catalog.tables
            ]
        found = _find(catalog.tables, table or "")
        if found is None:
            raise AskRefused(
                f"the source {catalog.name!r} has no table {table!r}: tables(source="
                f"{catalog.name!r}) lists them"
            )
        return [
            {"column": c.name, "type": c.type, "nullable": c.nullable, "description": c.description}
            for c in found.columns
        ]

    def take_records(self) -> list[QueryRecord]:
        records, self.records = self.records, []
        return records

    def _name(self, source: str | None) -> str:
        """The source asked for by name, or the only one."""
        if source is None:
            if len(self.catalog) == 1:
                return next(iter(self.catalog))
            raise AskRefused(
                f"say which source: source= one of {', '.join(map(repr, self.catalog))}"
            )
        if source not in self.catalog:
            known = ", ".join(map(repr, self.catalog)) or "none"
            raise AskRefused(f"no data source is called {source!r}; this project has: {known}")
        return source


def _qualified(table: TableInfo) -> str:
    return f"{table.schema}.{table.name}" if table.schema else table.name


def _find(tables: list[TableInfo], wanted: str) -> TableInfo | None:
    """A table by its name, schema-qualified or not (case-insensitive when unambiguous)."""
    for match in (
        lambda t: _qualified(t) == wanted or t.name == wanted,
        lambda t: _qualified(t).lower() == wanted.lower() or t.name.lower() == wanted.lower(),
    ):
        found = [t for t in tables if match(t)]
        if len(found) == 1:
            return found[0]
    return None

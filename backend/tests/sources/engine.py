"""Running queries through the engine in tests: a source's connection on this machine's
services, with the reach that lets the tests' servers and files be used."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow as pa

from app.config import Settings
from app.sources.connection import SourceConnection
from app.sources.querying import QueryLimits, stream_query
from app.sources.reach import Reach
from app.sources.urls import parse

LIMITS = QueryLimits(timeout_seconds=10, max_rows=100_000, max_bytes=64 * 1024**2)


def reach(files: Path | None = None, data_dir: Path | None = None, **settings: Any) -> Reach:
    """Where sources may connect: anywhere (and these files), as on an embedded server."""
    values: dict[str, Any] = {"DATA_DIR": data_dir or Path("/nonexistent-data-dir")}
    if files is not None:
        values["SOURCES_FILE_DIRS"] = str(files)
    values.update(settings)
    return Reach.of(Settings(_env_file=None, **values))  # type: ignore[call-arg]


def connection(url: str, files: Path | None = None, **settings: Any) -> SourceConnection:
    return SourceConnection(name="src", url=parse(url), reach=reach(files, **settings))


async def collect(
    source: SourceConnection, sql: str, limits: QueryLimits = LIMITS, batch_rows: int = 50_000
) -> pa.Table:
    """The whole result, checking that every batch has the same schema."""
    batches = [b async for b in stream_query(source, sql, limits, batch_rows)]
    assert batches, "at least one batch, even for no rows"
    assert all(b.schema == batches[0].schema for b in batches)
    return pa.Table.from_batches(batches)


def run(coro: Any) -> Any:
    return asyncio.run(coro)

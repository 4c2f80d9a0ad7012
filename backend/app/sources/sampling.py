"""A table's first rows for the schema browser (GET /sources/{id}/sample): the table must be
one the last check listed, its name goes into the statement as a quoted identifier built
by sqlglot in the source's dialect (never pasted text), and the statement runs through the
agent's own path (app.sources.querying: the parser's check, a read-only transaction, the
statement timeout, row and byte caps). A few at a time per server process: a full pool
answers 503 with Retry-After."""

from __future__ import annotations

import base64
import contextlib
import datetime
import decimal
import math
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from sqlalchemy.ext.asyncio import AsyncSession
from sqlglot import exp
from sqlglot.errors import SqlglotError

from app.config import Settings
from app.db import release_connection
from app.errors import Conflict, ServiceUnavailable
from app.models import DataSource
from app.sources import dictionary
from app.sources.credentials import CannotDecrypt
from app.sources.querying import QueryFailed, QueryLimits, QueryRefused, stream_query
from app.sources.service import connection_of
from app.sources.statements import DIALECTS
from app.sources.urls import SourceKind

# The most rows a sample may ask for (the route's `limit`), and its default.
MAX_SAMPLE_ROWS = 50
DEFAULT_SAMPLE_ROWS = 20
# A sample is a glance: small, whatever the source's own caps allow.
SAMPLE_MAX_BYTES = 8 * 1024**2
SAMPLE_TIMEOUT_SECONDS = 10.0
# A cell's text is cut here (a long text or JSON value in a table of a few rows).
CELL_CHARS = 500
# Samples running at once in this process; the next answers 503 (Retry-After).
CONCURRENT_SAMPLES = 4
_running = 0


@dataclass(frozen=True)
class Sample:
    schema: str
    table: str
    columns: list[tuple[str, str]]  # (name, Arrow type)
    rows: list[list[Any]]
    limit: int


def statement(kind: str, schema: str, table: str, limit: int) -> str:
    """`SELECT * FROM "schema"."table" LIMIT n` in the source's dialect, every name a
    quoted identifier (its quotes doubled as the dialect escapes them)."""
    dialect = DIALECTS[SourceKind(kind)]
    target = exp.Table(
        this=exp.to_identifier(table, quoted=True),
        db=exp.to_identifier(schema, quoted=True) if schema else None,
    )
    return exp.select("*").from_(target).limit(limit).sql(dialect=dialect)


def _cell(value: Any) -> Any:
    """A value as JSON can carry it, readable in a table cell."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        number = float(value)
        return number if math.isfinite(number) else str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        shown = base64.b64encode(value[:48]).decode()
        return f"<{len(value)} bytes: {shown}{'…' if len(value) > 48 else ''}>"
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + "…"


@contextlib.contextmanager
def _slot() -> Any:
    global _running
    if _running >= CONCURRENT_SAMPLES:
        raise ServiceUnavailable(
            "Too many table samples are being read right now: try again in a moment.",
            code="samples_busy",
            retry_after=2,
        )
    _running += 1
    try:
        yield
    finally:
        _running -= 1


async def sample(
    db: AsyncSession,
    source: DataSource,
    settings: Settings,
    schema: str | None,
    table: str,
    limit: int,
) -> Sample:
    """The first `limit` rows of a table the last check listed.

    Raises:
        NotFound: the table is not in the cached schema (table_not_found).
        BadRequest: the name is in several schemas and `schema` is not given.
        Conflict: the source is not ready, or the database refused or failed (its sentence).
        ServiceUnavailable: too many samples at once.
    """
    found = await dictionary.find_table(db, source, schema, table)
    if source.status != "ready":
        raise Conflict(
            f"The source {source.name} is not ready ({source.status}): check it first.",
            code="source_not_ready",
        )
    try:
        sql = statement(source.kind, found.schema_name, found.name, limit)
        connection = connection_of(source, settings)
    except (SqlglotError, CannotDecrypt) as exc:
        raise Conflict(f"The table cannot be sampled: {exc}.", code="sample_failed") from None
    limits = QueryLimits(
        timeout_seconds=min(SAMPLE_TIMEOUT_SECONDS, settings.SOURCES_QUERY_TIMEOUT_SECONDS),
        max_rows=limit,
        max_bytes=min(SAMPLE_MAX_BYTES, settings.SOURCES_MAX_RESULT_MB * 1024**2),
    )
    # No connection of the workbench's is held while the source's server is reached.
    await release_connection(db)
    with _slot():
        batches: list[pa.RecordBatch] = []
        rows = stream_query(connection, sql, limits)
        try:
            async for batch in rows:
                batches.append(batch)
        except (QueryRefused, QueryFailed) as exc:
            raise Conflict(str(exc), code="sample_failed") from None
        finally:
            await rows.aclose()  # type: ignore[attr-defined]
    result = pa.Table.from_batches(batches)
    values = [column.to_pylist() for column in result.columns]
    return Sample(
        schema=found.schema_name,
        table=found.name,
        columns=[(f.name, str(f.type)) for f in result.schema],
        rows=[[_cell(v) for v in row] for row in zip(*values, strict=True)],
        limit=limit,
    )

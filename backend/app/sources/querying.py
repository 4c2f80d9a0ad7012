"""Running the agent's SQL on a source: `stream_query` checks the statement
(app.sources.statements), connects to the source's checked address, runs it read-only with
the database's own statement timeout and an asyncio one around it, and streams the result
as Arrow record batches under row and byte caps.

    limits = QueryLimits(timeout_seconds=30, max_rows=1_000_000, max_bytes=256 * 1024**2)
    connections = await connections_of(db, project_id, settings)  # app.sources.service
    async for batch in stream_query(connections["sales"], "SELECT …", limits):
        writer.write_batch(batch)  # one schema for every batch
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pyarrow as pa

from app.sources.connection import SourceConnection
from app.sources.drivers import open_session
from app.sources.failures import SourceFailure
from app.sources.refusals import QueryFailed, QueryRefused, timed_out
from app.sources.statements import check_query

__all__ = ["QueryFailed", "QueryLimits", "QueryRefused", "SourceConnection", "stream_query"]

# Rows asked of the database at a time (by drivers that fetch rows; PostgreSQL's COPY sends
# blocks of bytes); a batch is handed on when it reaches batch_rows rows or BATCH_BYTES
# bytes, so that about one batch is held at once.
FETCH_ROWS = 5_000
BATCH_BYTES = 64 * 1024**2
# The asyncio timeout leaves the database's own this much time to fire first.
GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class QueryLimits:
    """Bounds of one query: time spent waiting on the database, rows and Arrow bytes."""

    timeout_seconds: float
    max_rows: int
    max_bytes: int


async def stream_query(
    connection: SourceConnection, sql: str, limits: QueryLimits, batch_rows: int = 50_000
) -> AsyncIterator[pa.RecordBatch]:
    """The result of `sql` on the source, batch by batch (at least one, maybe empty, so
    the schema is always known; every batch has the same schema).

    Stopping early (`aclose()`, or leaving an `async for`) closes the connection at once.

    Args:
        connection: The source (app.sources.service.connections_of).
        sql: One read-only statement, as the agent wrote it.
        limits: The statement timeout, and the most rows and bytes the result may have.
        batch_rows: The most rows in one batch.

    Raises:
        QueryRefused: before any connection, when `sql` is not a single read-only query.
        QueryFailed: the source cannot be reached, the database refused the statement (its
            own message, credentials scrubbed), or the timeout or a cap was passed.
    """
    check_query(sql, connection.kind, limits.timeout_seconds)
    try:
        async with asyncio.timeout(connection.reach.connect_timeout + GRACE_SECONDS):
            session = await open_session(connection)
    except SourceFailure as exc:
        raise QueryFailed(exc.sentence) from None
    except TimeoutError:
        raise QueryFailed(
            f"The source {connection.name} did not answer within "
            f"{connection.reach.connect_timeout:g} s."
        ) from None
    try:
        # Again at each query: a role made superuser since its check is not used.
        role = await session.role()
        if role.refusal is not None:
            raise QueryFailed(role.refusal)
        chunks = session.chunks(sql, limits.timeout_seconds, min(batch_rows, FETCH_ROWS))
        try:
            async for batch in _batched(chunks, limits, batch_rows):
                yield batch
        finally:
            await chunks.aclose()
    finally:
        await session.close()


async def _batched(
    chunks: AsyncIterator[pa.RecordBatch], limits: QueryLimits, batch_rows: int
) -> AsyncIterator[pa.RecordBatch]:
    """`chunks` (of any size) regrouped into batches of up to `batch_rows` rows, within the
    limits."""
    pending: list[pa.RecordBatch] = []
    pending_rows = pending_bytes = total_rows = total_bytes = 0
    waited = 0.0
    sent = False
    first: pa.RecordBatch | None = None  # sent, empty, when no row comes
    while True:
        started = time.monotonic()
        try:
            async with asyncio.timeout(limits.timeout_seconds + GRACE_SECONDS - waited):
                chunk = await anext(chunks, None)
        except TimeoutError:
            raise timed_out(limits.timeout_seconds) from None
        waited += time.monotonic() - started
        if chunk is None:
            break
        if first is None:
            first = chunk.slice(0, 0)
        over_rows = total_rows + chunk.num_rows > limits.max_rows
        if over_rows:
            chunk = chunk.slice(0, limits.max_rows - total_rows)
        total_rows += chunk.num_rows
        total_bytes += chunk.nbytes
        if total_bytes > limits.max_bytes:
            if pending:
                yield _joined(pending)
            raise QueryFailed(
                f"The result is larger than {limits.max_bytes / 1024**2:,.0f} MiB (the "
                "limit): select fewer columns or rows, or aggregate in the database."
            )
        while chunk.num_rows:
            room = batch_rows - pending_rows
            piece, chunk = chunk.slice(0, room), chunk.slice(room)
            pending.append(piece)
            pending_rows += piece.num_rows
            pending_bytes += piece.nbytes
            if pending_rows >= batch_rows or pending_bytes >= BATCH_BYTES:
                yield _joined(pending)
                sent, pending, pending_rows, pending_bytes = True, [], 0, 0
        if over_rows:
            if pending:
                yield _joined(pending)
            raise QueryFailed(
                f"The result has more than {limits.max_rows:,} rows (the limit): aggregate "
                "or filter in the database, or add LIMIT."
            )
    if pending:
        yield _joined(pending)
    elif not sent and first is not None:
        yield first


def _joined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)

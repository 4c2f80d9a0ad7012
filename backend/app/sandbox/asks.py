"""The host's side of a step's asks for data (`sql()`, `tables()`, `columns()`).

A worker's ask is hostile like everything a worker sends: its fields are checked here, and
what it asks for is answered by the run's `DataAnswerer` (the backend's data sources),
which holds the credentials and runs the statement. The sandbox only carries the rows: the
answerer's Arrow record batches go to the worker as Arrow IPC streams (LZ4-compressed but
for a few rows), one frame per ask, so the database is read only as fast as the code takes the rows.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.sandbox.protocol import ASKS, MAX_ASK_CHARS, QUERY_FRAME_BYTES, Message

if TYPE_CHECKING:
    import pyarrow as pa

logger = logging.getLogger(__name__)

MAX_NAME_CHARS = 500
COMPRESS_ABOVE = 64 << 10
LOOKUPS = ("tables", "columns")


class AskRefused(Exception):
    """The ask cannot be answered; the message is what the code's call raises."""


@dataclass(frozen=True)
class QueryRecord:
    """One query a step ran, as the step keeps it (`step.queries`)."""

    source: str
    sql: str
    rows: int
    duration_ms: int
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as the API and the events carry it."""
        return {
            "source": self.source,
            "sql": self.sql,
            "rows": self.rows,
            "duration_ms": self.duration_ms,
            "error": self.error,
        }


class DataAnswerer(Protocol):
    """What answers a run's asks for data (the backend's data sources)."""

    def query(
        self, sql: str, source: str | None, room: int | None, deadline: float
    ) -> Iterator[pa.RecordBatch]:
        """Run one query; its batches, lazily (closing the iterator stops the query).

        Args:
            sql: The statement, as the code wrote it.
            source: The source's name (None: the only one).
            room: With a result going into a file: the most bytes it may take (the
                workspace's free quota); None for a DataFrame.
            deadline: time.monotonic() by which the step must end.

        Raises:
            AskRefused: The query is refused or failed (also from the iterator).
        """
        ...

    def lookup(self, what: str, source: str | None, table: str | None) -> list[dict[str, Any]]:
        """The source's tables, or one table's columns, as rows.

        Raises:
            AskRefused: No such source or table.
        """
        ...

    def take_records(self) -> list[QueryRecord]:
        """The queries run since last asked (each step keeps its own)."""
        ...


class Asks:
    """One step's asks: at most one query open at a time, its rows one frame per ask."""

    def __init__(self, answerer: DataAnswerer | None, room: Callable[[], int]) -> None:
        """Answer a step's asks.

        Args:
            answerer: The run's data sources (None: the project has none).
            room: The workspace's free quota in bytes now (what a result written to a
                file may take).
        """
        self.answerer = answerer
        self.room = room
        self._open: Iterator[bytes] | None = None

    def answer(self, ask: Message, deadline: float) -> Message:
        """The one frame that answers an ask (never raises for what the worker sent)."""
        try:
            return self._answer(ask, deadline)
        except AskRefused as refused:
            self.close()
            return {"type": "query_error", "error": str(refused)[:MAX_ASK_CHARS]}

    def _answer(self, ask: Message, deadline: float) -> Message:
        kind = ask.get("type")
        if kind not in ASKS:
            raise AskRefused(f"unknown ask {kind!r}")
        if kind == "query_next":
            if self._open is None:
                raise AskRefused("no query is open")
            return self._next()
        if kind == "query_close":
            self.close()
            return {"type": "query_end"}
        answerer = self._answerer()
        source = _name(ask.get("source"), "source")
        if kind == "lookup":
            what, table = ask.get("what"), _name(ask.get("table"), "table")
            if what not in LOOKUPS:
                raise AskRefused(f"unknown lookup {what!r}")
            rows = answerer.lookup(str(what), source, table)
            return {"type": "lookup_result", "rows": rows}
        sql = ask.get("sql")
        if not isinstance(sql, str) or not sql.strip() or len(sql) > MAX_ASK_CHARS:
            raise AskRefused("sql() needs one statement as a string")
        self.close()
        room = self.room() if ask.get("into") is True else None
        self._open = _frames(answerer.query(sql, source, room, deadline))
        return self._next()

    def _answerer(self) -> DataAnswerer:
        if self.answerer is None:
            raise AskRefused(
                "this project has no data sources: add a database in the project's Sources "
                "panel first, or read the workspace's files"
            )
        return self.answerer

    def _next(self) -> Message:
        assert self._open is not None
        try:
            data = next(self._open)
        except StopIteration:
            self._open = None
            return {"type": "query_end"}
        except AskRefused:
            self._open = None
            raise
        except Exception as exc:  # a bug of ours must not leave the code waiting
            logger.exception("a query's rows could not be sent")
            self._open = None
            raise AskRefused(f"the rows could not be sent: {type(exc).__name__}") from exc
        return {"type": "query_rows", "data": base64.b64encode(data).decode("ascii")}

    def close(self) -> None:
        """Stop the open query, if any (the step ended, or the code stopped reading)."""
        open_, self._open = self._open, None
        if open_ is not None:
            with contextlib.suppress(Exception):
                open_.close()  # type: ignore[attr-defined]


def _name(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_CHARS:
        raise AskRefused(f"{what}= is a name, a non-empty string")
    return value


def _frames(batches: Iterable[pa.RecordBatch]) -> Iterator[bytes]:
    """Arrow IPC streams of about QUERY_FRAME_BYTES each; the first one even for no rows
    (it carries the columns). Batches are read from the answerer only as frames are due."""

    iterator = iter(batches)
    try:
        pending: list[pa.RecordBatch] = []
        size = 0
        schema = None
        sent = False
        for batch in iterator:
            schema = batch.schema
            for piece in _pieces(batch):
                pending.append(piece)
                size += piece.nbytes
                if size >= QUERY_FRAME_BYTES:
                    yield _stream(schema, pending)
                    pending, size, sent = [], 0, True
        if pending or (not sent and schema is not None):
            assert schema is not None
            yield _stream(schema, pending)
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


def _pieces(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """The batch in slices of at most about QUERY_FRAME_BYTES."""
    if batch.num_rows == 0 or batch.nbytes <= QUERY_FRAME_BYTES:
        yield batch
        return
    rows = max(1, batch.num_rows * QUERY_FRAME_BYTES // batch.nbytes)
    for start in range(0, batch.num_rows, rows):
        yield batch.slice(start, rows)


def _stream(schema: pa.Schema, batches: list[pa.RecordBatch]) -> bytes:
    """One Arrow IPC stream; its buffers LZ4-compressed unless the rows are few (each
    compressed buffer carries a header of its own, more than a small result saves)."""
    import pyarrow as pa

    small = sum(batch.nbytes for batch in batches) < COMPRESS_ABOVE
    options = pa.ipc.IpcWriteOptions(compression=None if small else "lz4")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=options) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())

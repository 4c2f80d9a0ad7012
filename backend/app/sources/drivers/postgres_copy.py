"""A PostgreSQL result streamed with `COPY (<query>) TO STDOUT` and parsed into Arrow in C++
(pyarrow's CSV reader over COPY's text format).

Why COPY and not a cursor: PostgreSQL never gives a cursor, or a portal that may be
suspended, a parallel plan, so a group-by over a big table ran on one core; COPY of a query
can use the parallel plan and still streams. Its text format puts each row on one line
(newlines inside values are escaped as `\\n`), so the stream is cut at line ends into
blocks, each parsed on its own in a thread while the next one arrives.

The query goes into COPY as text, so what surrounds it must stay ours (`stream_copy`): the
text put inside `COPY ( … )` is exactly the text PostgreSQL has first prepared on its own,
which it does only for one whole statement, so no string, comment, quoted name or
parenthesis is left open at its end to swallow or close what follows; a `--` comment ends
at the newline put after it. (The role check refuses the roles that could run COPY TO
PROGRAM or TO a file anyway.)
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import asyncpg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from app.sources.arrow import misfit, unique_names
from app.sources.refusals import QueryFailed

# How the values are written, whatever the server's or role's defaults (set for the
# transaction only). TimeZone is left alone: it changes what a query computes, and every
# timestamptz is written with its offset anyway.
OUTPUT_SETTINGS = {
    "DateStyle": "ISO",
    "IntervalStyle": "postgres",
    "bytea_output": "hex",
    "extra_float_digits": "1",
}
# Bytes of COPY text parsed at a time; at most about four blocks are held at once.
BLOCK_BYTES = 4 * 1024**2

# Types pyarrow's CSV reader converts itself. numeric becomes a float: a result's
# description does not carry its scale (cast to text in the SQL for every digit).
_NATIVE: dict[str, pa.DataType] = {
    "int2": pa.int16(),
    "int4": pa.int32(),
    "int8": pa.int64(),
    "oid": pa.int64(),
    "bool": pa.bool_(),
    "float4": pa.float32(),
    "float8": pa.float64(),
    "numeric": pa.float64(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "time": pa.time64("us"),
}
_TIMESTAMPTZ = pa.timestamp("us", tz="UTC")
_DURATION = pa.duration("us")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
# One interval as IntervalStyle 'postgres' writes it: `1 year 2 mons -3 days -04:05:06.5`.
_INTERVAL = re.compile(
    r"(?:(?P<years>[+-]?\d+) years? ?)?(?:(?P<months>[+-]?\d+) mons? ?)?"
    r"(?:(?P<days>[+-]?\d+) days? ?)?"
    r"(?:(?P<sign>[+-])?(?P<hours>\d+):(?P<minutes>\d+):(?P<seconds>\d+(?:\.\d+)?))?"
)
_ARRAY_ITEM = re.compile(r'"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^,{}"]*)', re.DOTALL)
_ARRAY_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_CSV_COLUMN = re.compile(r"column #(\d+)")


def _without_end(sql: str) -> str:
    """The statement without the semicolons and blanks that may end it (a query inside
    COPY ( … ) cannot end with a semicolon)."""
    query = sql.rstrip()
    while query.endswith(";"):
        query = query[:-1].rstrip()
    return query


def _unescape(text: str) -> str:
    """A value as COPY's text format wrote it (`\\t`, `\\n`, `\\\\`…), as it is."""
    return _ESCAPE.sub(lambda m: _ESCAPED.get(m[1], m[1]), text)


def _bytea(text: str) -> bytes:
    return bytes.fromhex(text[2:])  # bytea_output hex: \x0a0b


def _interval(text: str) -> timedelta:
    """An interval as a timedelta, a month counted as 30 days and a year as 365 (as asyncpg
    reads them)."""
    found = _INTERVAL.fullmatch(text)
    if found is None or not text:
        raise ValueError(f"not an interval: {text!r}")
    part = {k: v for k, v in found.groupdict().items() if v is not None}
    clock = timedelta(
        hours=int(part.get("hours", 0)),
        minutes=int(part.get("minutes", 0)),
        seconds=float(part.get("seconds", 0)),
    )
    days = int(part.get("years", 0)) * 365 + int(part.get("months", 0)) * 30
    return timedelta(days=days + int(part.get("days", 0))) + (
        -clock if part.get("sign") == "-" else clock
    )


def _timestamptz(text: str) -> datetime:
    return datetime.fromisoformat(text)


def array_items(text: str) -> list[str | None]:
    """The elements of a one-dimensional array as PostgreSQL writes it (`{a,"b c",NULL}`).

    Raises:
        ValueError: a multi-dimensional array, or not an array.
    """
    if text.startswith("["):  # bounds other than 1: `[0:1]={a,b}`
        text = text.partition("=")[2]
    if text.startswith("{{"):
        raise ValueError("a multi-dimensional array")
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"not an array: {text[:40]!r}")
    body, at = text[1:-1], 0
    items: list[str | None] = []
    while body:
        found = _ARRAY_ITEM.match(body, at)
        assert found is not None  # the pattern also matches nothing
        if found["quoted"] is not None:
            items.append(_ARRAY_ESCAPE.sub(r"\1", found["quoted"]))
        else:
            items.append(None if found["bare"] == "NULL" else found["bare"])
        at = found.end()
        if at >= len(body):
            break
        if body[at] != ",":
            raise ValueError(f"not an array: {text[:40]!r}")
        at += 1
    return items


# How an array's element of each type is read from its text.
_ELEMENTS: dict[str, tuple[pa.DataType, Callable[[str], Any]]] = {
    "int2": (pa.int16(), int),
    "int4": (pa.int32(), int),
    "int8": (pa.int64(), int),
    "oid": (pa.int64(), int),
    "bool": (pa.bool_(), lambda t: t == "t"),
    "float4": (pa.float32(), float),
    "float8": (pa.float64(), float),
    "date": (pa.date32(), date.fromisoformat),
    "timestamp": (pa.timestamp("us"), datetime.fromisoformat),
    "timestamptz": (_TIMESTAMPTZ, _timestamptz),
    "time": (pa.time64("us"), time.fromisoformat),
    "interval": (_DURATION, _interval),
    "bytea": (pa.binary(), _bytea),
    "text": (pa.string(), str),
    "varchar": (pa.string(), str),
}


def _array_of(read: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def convert(text: str) -> list[Any]:
        return [None if item is None else read(item) for item in array_items(text)]

    return convert


@dataclass(frozen=True)
class CopyColumn:
    """One result column: its name and Arrow type, and, when pyarrow's CSV reader cannot
    give that type itself, how one value's text becomes it (the column is then read as
    text)."""

    name: str
    type: pa.DataType
    read: Callable[[str], Any] | None = None

    @property
    def read_as(self) -> pa.DataType:
        return self.type if self.read is None else pa.string()


def copy_column(name: str, pg_type: Any) -> CopyColumn:
    """The column for a result column of this PostgreSQL type (an asyncpg Type): anything
    without an Arrow match (json, uuid, inet, enums…) as text."""
    type_name = pg_type.name
    if type_name in _NATIVE:
        return CopyColumn(name, _NATIVE[type_name])
    if type_name in ("timestamptz", "interval", "bytea"):
        arrow_type, read = _ELEMENTS[type_name]
        return CopyColumn(name, arrow_type, read)
    element = type_name.removesuffix("[]")
    if pg_type.kind == "array" and element in _ELEMENTS:
        arrow_type, read = _ELEMENTS[element]
        return CopyColumn(name, pa.list_(arrow_type), _array_of(read))
    return CopyColumn(name, pa.string())


class CopyText:
    """Blocks of COPY's text format (whole lines) parsed into record batches of one schema."""

    def __init__(self, columns: Sequence[CopyColumn]):
        self.columns = list(columns)
        self.schema = pa.schema([pa.field(c.name, c.type) for c in self.columns])
        keys = [f"c{i}" for i in range(len(self.columns))]
        self._read = pacsv.ReadOptions(column_names=keys, block_size=BLOCK_BYTES)
        self._parse = pacsv.ParseOptions(
            delimiter="\t",
            quote_char=False,
            escape_char=False,
            double_quote=False,
            # One empty text value is an empty line, a row all the same.
            ignore_empty_lines=False,
        )
        self._convert = pacsv.ConvertOptions(
            column_types={k: c.read_as for k, c in zip(keys, self.columns, strict=True)},
            null_values=["\\N"],  # NULL; an empty string is empty, a text '\N' is '\\N'
            strings_can_be_null=True,
            true_values=["t"],
            false_values=["f"],
        )

    def empty(self) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist([], schema=self.schema)

    def parse(self, block: bytes) -> pa.RecordBatch:
        """One block of whole lines as a record batch.

        Raises:
            QueryFailed: a value does not fit its column's type (the message says to CAST).
        """
        if not self.columns:  # `SELECT FROM t`: rows of nothing, which Arrow cannot count
            return self.empty()
        try:
            table = pacsv.read_csv(
                pa.py_buffer(block),
                read_options=self._read,
                parse_options=self._parse,
                convert_options=self._convert,
            )
        except pa.ArrowInvalid as exc:
            found = _CSV_COLUMN.search(str(exc))
            column = self.columns[int(found[1])] if found else None
            if column is None:
                raise QueryFailed(f"PostgreSQL's COPY output could not be read: {exc}") from None
            raise misfit(column.name, column.type, str(exc)) from None
        arrays = [
            self._finish(column, table.column(i).combine_chunks())
            for i, column in enumerate(self.columns)
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _finish(self, column: CopyColumn, array: pa.Array) -> pa.Array:
        if not pa.types.is_string(column.read_as):
            return array
        escaped = pc.match_substring(array, "\\")  # null where the value is
        if pc.any(escaped).as_py():
            values = pc.filter(array, escaped).to_pylist()
            array = pc.replace_with_mask(array, escaped, pa.array([_unescape(v) for v in values]))
        if column.read is None:
            return array
        if column.type == _TIMESTAMPTZ:
            with contextlib.suppress(pa.ArrowInvalid):  # offsets with seconds: below
                return pc.cast(array, _TIMESTAMPTZ)
        read = column.read
        try:
            return pa.array(
                [None if v is None else read(v) for v in array.to_pylist()], type=column.type
            )
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise misfit(column.name, column.type, str(exc)) from None


async def stream_copy(conn: asyncpg.Connection, sql: str) -> AsyncGenerator[pa.RecordBatch, None]:
    """The result of `sql` in record batches of one schema: at least one, maybe empty.
    About one block is read ahead while one is parsed; leaving early cancels the COPY (the
    caller then closes the connection).

    Args:
        conn: A connection in the transaction the query is to run in.
        sql: One query (already checked), maybe ending with semicolons.

    Raises:
        asyncpg.PostgresError: the database's own error (a statement timeout among them).
        QueryFailed: a value does not fit its column's type.
    """
    query = _without_end(sql)
    # PostgreSQL's own parse of exactly the text COPY will hold, and the result's column
    # types, without running it.
    attributes = (await conn.prepare(query)).get_attributes()
    names = unique_names([a.name for a in attributes])
    text = CopyText([copy_column(n, a.type) for n, a in zip(names, attributes, strict=True)])
    blocks: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(maxsize=2)
    pending = bytearray()

    async def take(data: bytes) -> None:
        pending.extend(data)
        if len(pending) >= BLOCK_BYTES:
            end = pending.rfind(b"\n") + 1
            if end:
                await blocks.put(bytes(pending[:end]))
                del pending[:end]

    async def copy() -> None:
        try:
            await conn.copy_from_query(f"{query}\n", output=take, format="text")
            if pending:
                await blocks.put(bytes(pending))
        except Exception as exc:  # handed to the reader, which raises it
            await blocks.put(exc)
        else:
            await blocks.put(None)

    task = asyncio.create_task(copy())
    sent = False
    try:
        while (block := await blocks.get()) is not None:
            if isinstance(block, BaseException):
                raise block
            yield await asyncio.to_thread(text.parse, block)
            sent = True
        if not sent:
            yield text.empty()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

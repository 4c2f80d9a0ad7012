"""A MySQL/MariaDB result's rows read off the wire in blocks and cut into Arrow columns with
numpy, instead of aiomysql's coroutine and Python objects per row and per value (a million
rows: about 9 s that way, under 1 s this way).

After a query on an unbuffered cursor, its rows follow on the connection as packets (a
3-byte length, a sequence number, then each value as a length-encoded string, or 0xFB for
NULL) until an EOF packet, or an ERR packet when the server stops the query. The packets'
boundaries are found in Python (one step per row); each column's values are then found for
all rows of a block at once, and become a binary Arrow array that Arrow casts (in C++) to
the column's type.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import numpy as np
import pyarrow as pa
import pymysql

from app.sources.refusals import QueryFailed

# Bytes gathered before a block's rows are cut.
BLOCK_BYTES = 1024**2
_NULL = 0xFB
_MAX_PACKET = 0xFFFFFF


def _packets(buffer: bytearray, at: int, starts: list[int]) -> tuple[int, bool]:
    """Appends to `starts` where each whole row packet of `buffer` from `at` begins.

    Returns:
        Where the first incomplete packet begins, and whether the result's end was reached.

    Raises:
        pymysql.MySQLError: the server sent an error instead of a row (e.g. its timeout).
        QueryFailed: a row of 16 MiB or more (MySQL splits it over packets).
    """
    size = len(buffer)
    while at + 4 <= size:
        length = buffer[at] | buffer[at + 1] << 8 | buffer[at + 2] << 16
        if at + 4 + length > size:
            break
        first = buffer[at + 4] if length else -1
        # EOF (a row starting with a value of 16 MiB would be longer). aiomysql does not
        # ask for CLIENT_DEPRECATE_EOF, which would end the rows with an OK packet instead.
        if first == 0xFE and length < 9:
            return at + 4 + length, True
        if first == 0xFF:
            pymysql.err.raise_mysql_exception(bytes(buffer[at + 4 : at + 4 + length]))
        if length == _MAX_PACKET:
            raise QueryFailed(
                "A row of the result is 16 MiB or more: select fewer or smaller columns."
            )
        starts.append(at + 4)
        at += 4 + length
    return at, False


def _columns(buffer: bytes, starts: list[int], count: int) -> list[pa.Array]:
    """The `count` values of each row packet beginning at `starts`, as binary arrays."""
    data = np.frombuffer(buffer, dtype=np.uint8)
    last = len(data) - 1
    at = np.asarray(starts, dtype=np.int64)
    arrays = []
    for _ in range(count):
        first = data[at].astype(np.int64)

        def byte(n: int, at: np.ndarray = at) -> np.ndarray:
            return data[np.minimum(at + n, last)].astype(np.int64)

        # A length-encoded string: a length under 251 in one byte, or 0xFC/0xFD/0xFE and
        # the length in the next 2/3/8 bytes (little-endian; lengths fit in 6 here).
        two, three, eight = first == 0xFC, first == 0xFD, first == 0xFE
        null = first == _NULL
        length = np.where(first < _NULL, first, 0)
        if two.any() or three.any() or eight.any():
            wide = byte(1) | byte(2) << 8
            wide = wide | np.where(three | eight, byte(3) << 16, 0)
            wide = wide | np.where(eight, byte(4) << 24 | byte(5) << 32 | byte(6) << 40, 0)
            length = np.where(two | three | eight, wide, length)
        begin = at + 1 + 2 * two + 3 * three + 8 * eight
        offsets = np.zeros(len(at) + 1, dtype=np.int64)
        np.cumsum(length, out=offsets[1:])
        values = data[np.repeat(begin - offsets[:-1], length) + np.arange(offsets[-1])]
        validity = pa.py_buffer(np.packbits(~null, bitorder="little")) if null.any() else None
        arrays.append(
            pa.Array.from_buffers(
                pa.large_binary(),
                len(at),
                [validity, pa.py_buffer(offsets), pa.py_buffer(values)],
                null_count=int(null.sum()),
            )
        )
        at = begin + length
    return arrays


async def wire_rows(reader: asyncio.StreamReader, count: int) -> AsyncGenerator[list[pa.Array]]:
    """The rest of a result of `count` columns, in blocks of rows: each block a binary array
    per column (values as the server wrote them: text, or bytes for binary types).

    Raises:
        pymysql.MySQLError: the server stopped the query (its own message).
        QueryFailed: the connection closed mid-result, or a row is too large.
    """
    buffer, scanned = bytearray(), 0
    starts: list[int] = []
    while True:
        more = await reader.read(BLOCK_BYTES)
        if not more:
            raise QueryFailed("The database closed the connection in the middle of a result.")
        buffer += more
        scanned, done = _packets(buffer, scanned, starts)
        if done or len(buffer) >= BLOCK_BYTES:
            if starts:
                yield _columns(bytes(buffer), starts, count)
            if done:
                return
            buffer, scanned, starts = buffer[scanned:], 0, []

"""MariaDB results on this machine's real server, read off the wire in blocks
(app/sources/drivers/mysql_rows.py): every type exact, NULL apart from '', values of every
length-prefix size, many rows across blocks, the server's errors mid-result, an early stop."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pyarrow as pa
import pytest

from app.sources.querying import QueryFailed, QueryLimits, stream_query
from tests.sources.engine import collect, connection, run
from tests.support import source_databases as dbs
from tests.support.source_databases import ServerSource

TYPES = """
SELECT CAST(12.345 AS DECIMAL(10, 3)) AS num, CAST(-0.5 AS DECIMAL(5, 2)) AS negative,
       CAST('123456789012345678901234567890123456789.5' AS DECIMAL(65, 1)) AS huge,
       CAST(NULL AS DECIMAL(4, 1)) AS nothing, DATE '2020-02-29' AS day,
       TIMESTAMP '2020-01-02 03:04:05.123456' AS stamp,
       CAST('2020-01-02 03:04:05' AS DATETIME) AS plain,
       created_at AS zoned, region AS text, CAST('' AS CHAR) AS empty, 9007199254740993 AS big
FROM orders WHERE id = 1
"""


def test_decimals_dates_and_timestamps_are_exact(mysql_source: ServerSource) -> None:
    table = run(collect(connection(mysql_source.url()), TYPES))
    assert table.schema.field("num").type == pa.decimal128(38, 3)
    assert table.schema.field("huge").type == pa.decimal256(76, 1)
    assert table.schema.field("day").type == pa.date32()
    assert table.schema.field("zoned").type == pa.timestamp("us", tz="UTC")
    assert table.to_pylist()[0] == {
        "num": Decimal("12.345"),
        "negative": Decimal("-0.50"),
        "huge": Decimal("123456789012345678901234567890123456789.5"),
        "nothing": None,
        "day": date(2020, 2, 29),
        "stamp": datetime(2020, 1, 2, 3, 4, 5, 123456),
        "plain": datetime(2020, 1, 2, 3, 4, 5),
        # The orders table's default, in the session's zone (UTC).
        "zoned": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "text": "south",
        "empty": "",
        "big": 9007199254740993,
    }


def test_a_zero_date_says_to_cast(mysql_source: ServerSource) -> None:
    with pytest.raises(QueryFailed, match=r"'zero' holds a value .* CAST it"):
        run(collect(connection(mysql_source.url()), "SELECT CAST('0000-00-00' AS DATE) AS zero"))


def test_nulls_lengths_bytes_and_times_come_back_as_they_are(mysql_source: ServerSource) -> None:
    sql = """
    SELECT NULL AS nothing, '' AS empty, 'żółw 🐢 \\t' AS unicode,
           REPEAT('a', 250) AS short, REPEAT('b', 251) AS two_bytes,
           REPEAT('c', 70000) AS three_bytes, UNHEX('00FF0A') AS raw,
           CAST('-838:59:59' AS TIME) AS minus, CAST('12:00:01.5' AS TIME(1)) AS noon,
           CAST(18446744073709551615 AS UNSIGNED) AS top, CAST(1.5 AS DOUBLE) AS fraction,
           CAST(NULL AS SIGNED) AS no_number
    """
    row = run(collect(connection(mysql_source.url()), sql)).to_pylist()[0]
    assert row == {
        "nothing": None,
        "empty": "",
        "unicode": "żółw 🐢 \t",  # MySQL reads \\t in a literal as a tab
        "short": "a" * 250,
        "two_bytes": "b" * 251,
        "three_bytes": "c" * 70000,
        "raw": b"\x00\xff\n",
        "minus": -timedelta(hours=838, minutes=59, seconds=59),
        "noon": timedelta(hours=12, seconds=1.5),
        "top": 18446744073709551615,
        "fraction": 1.5,
        "no_number": None,
    }


def test_many_rows_arrive_whole_across_blocks(mysql_source: ServerSource) -> None:
    sql = (
        "SELECT seq AS n, IF(seq % 3 = 0, NULL, CONCAT('row ', seq)) AS label FROM seq_1_to_300000"
    )
    table = run(collect(connection(mysql_source.url()), sql, QueryLimits(60, 10**6, 10**9)))
    assert table.num_rows == 300_000
    assert table.column("n").to_pylist() == list(range(1, 300_001))
    labels = table.column("label").to_pylist()
    assert labels[:3] == ["row 1", "row 2", None] and labels[-2:] == ["row 299999", None]


def test_an_empty_result_still_carries_its_schema(mysql_source: ServerSource) -> None:
    table = run(collect(connection(mysql_source.url()), "SELECT id, note FROM orders WHERE 0"))
    assert table.num_rows == 0 and table.schema.names == ["id", "note"]


def test_an_error_in_the_middle_of_the_rows_is_the_servers(mysql_source: ServerSource) -> None:
    """The server stops after sending rows (here: a division by zero in strict mode would
    only warn, so the statement timeout does it)."""
    sql = "SELECT seq, SLEEP(0.001) AS nap FROM seq_1_to_100000"
    limits = QueryLimits(timeout_seconds=1, max_rows=10**6, max_bytes=10**9)
    with pytest.raises(QueryFailed, match="statement timeout"):
        run(collect(connection(mysql_source.url()), sql, limits))


def test_stopping_early_closes_the_connection(mysql_source: ServerSource) -> None:
    async def first_then_stop() -> int:
        stream = stream_query(
            connection(mysql_source.url()),
            "SELECT a.seq * 1000000 + b.seq AS n FROM seq_1_to_1000 a, seq_1_to_1000000 b",
            QueryLimits(60, 10**9, 10**11),
            10_000,
        )
        batch = await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        return batch.num_rows

    assert run(first_then_stop()) == 10_000

    async def connections() -> int:
        for _ in range(50):
            rows = await dbs.mysql_execute(
                "SELECT count(*) FROM information_schema.PROCESSLIST "
                f"WHERE USER = '{mysql_source.writer}'"
            )
            if rows[0][0] == 0:
                return 0
            await asyncio.sleep(0.1)
        return int(rows[0][0])  # type: ignore[call-overload]

    assert run(connections()) == 0

"""MariaDB results on this machine's real server: decimals, dates and timestamps arrive as
the server's text and are parsed by Arrow (app/sources/arrow.py `parse_text`), exactly."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from app.sources.querying import QueryFailed
from tests.sources.engine import collect, connection, run
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

"""PostgreSQL results read through COPY … TO STDOUT (app/sources/drivers/postgres_copy.py) on
this machine's real server: every type as Arrow, text with whatever it may hold, NULL kept
apart from '', and the caps, the timeout and an early stop during a COPY."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, time, timedelta

import pyarrow as pa
import pytest

from app.sources.drivers.postgres_copy import array_items
from app.sources.querying import QueryFailed, QueryLimits, stream_query
from tests.sources.engine import collect, connection, run
from tests.support import source_databases as dbs
from tests.support.source_databases import ServerSource

TYPES = """
SELECT 1::int2 AS small, 2::int4 AS medium, 9007199254740993::int8 AS big, 1.5::float4 AS f4,
       'NaN'::float8 AS nan, '-Infinity'::float8 AS minus_inf, 0.1::float8 AS tenth,
       12.345::numeric(10, 3) AS num, true AS yes, false AS no,
       date '2020-02-29' AS day, timestamp '2020-01-02 03:04:05.123456' AS stamp,
       timestamptz '2020-01-02 03:04:05.5+02' AS zoned, time '23:59:59.999999' AS clock,
       interval '1 year 2 mons -3 days -04:05:06.5' AS span, '\\x00ff0a'::bytea AS raw,
       '{"k": [1, "two"]}'::jsonb AS doc, '6ecd8c99-4036-403d-bf84-cf8400f67836'::uuid AS id,
       '10.0.0.1/32'::inet AS address, ARRAY[1, NULL, 3] AS ints,
       ARRAY['a', 'b c', NULL, 'd"e', 'NULL', 'f,g', '{h}'] AS texts,
       ARRAY[date '2020-01-01'] AS days, '{}'::text[] AS nothing, 'x'::varchar(3) AS short
"""


def test_every_type_has_its_arrow_type_and_value(pg_source: ServerSource) -> None:
    table = run(collect(connection(pg_source.url()), TYPES))
    assert dict(zip(table.schema.names, table.schema.types, strict=True)) == {
        "small": pa.int16(),
        "medium": pa.int32(),
        "big": pa.int64(),
        "f4": pa.float32(),
        "nan": pa.float64(),
        "minus_inf": pa.float64(),
        "tenth": pa.float64(),
        "num": pa.float64(),
        "yes": pa.bool_(),
        "no": pa.bool_(),
        "day": pa.date32(),
        "stamp": pa.timestamp("us"),
        "zoned": pa.timestamp("us", tz="UTC"),
        "clock": pa.time64("us"),
        "span": pa.duration("us"),
        "raw": pa.binary(),
        "doc": pa.string(),
        "id": pa.string(),
        "address": pa.string(),
        "ints": pa.list_(pa.int32()),
        "texts": pa.list_(pa.string()),
        "days": pa.list_(pa.date32()),
        "nothing": pa.list_(pa.string()),
        "short": pa.string(),
    }
    row = table.to_pylist()[0]
    assert row["big"] == 9007199254740993  # past a float's integers
    assert row["nan"] != row["nan"] and row["minus_inf"] == float("-inf")
    assert row["tenth"] == 0.1 and row["num"] == 12.345 and row["f4"] == 1.5
    assert (row["yes"], row["no"]) == (True, False)
    assert row["day"] == date(2020, 2, 29)
    assert row["stamp"] == datetime(2020, 1, 2, 3, 4, 5, 123456)
    assert row["zoned"] == datetime(2020, 1, 2, 1, 4, 5, 500000, tzinfo=UTC)
    assert row["clock"] == time(23, 59, 59, 999999)
    # As asyncpg counts them: a year 365 days, a month 30.
    assert row["span"] == timedelta(days=365 + 60 - 3, hours=-4, minutes=-5, seconds=-6.5)
    assert row["raw"] == b"\x00\xff\n"
    assert row["doc"] == '{"k": [1, "two"]}'
    assert row["id"] == "6ecd8c99-4036-403d-bf84-cf8400f67836"
    assert row["address"] == "10.0.0.1"
    assert row["ints"] == [1, None, 3]
    assert row["texts"] == ["a", "b c", None, 'd"e', "NULL", "f,g", "{h}"]
    assert row["days"] == [date(2020, 1, 1)] and row["nothing"] == []


def test_text_keeps_null_apart_from_empty_and_everything_it_holds(pg_source: ServerSource) -> None:
    values = [
        "",
        "\\N",
        "NULL",
        "tab\there",
        "two\nlines\r\nand a return",
        'quotes " and \' and ""',
        "commas, semicolons; pipes |",
        "back\\slash \\n not a newline \\\\",
        "unicode: żółw 🐢 ∑",
        "\\x00ff",
    ]
    rows = ", ".join(f"({i}, {_literal(v)})" for i, v in enumerate(values))
    sql = f"SELECT v FROM (VALUES {rows}, ({len(values)}, NULL)) AS t(i, v) ORDER BY i"
    assert run(collect(connection(pg_source.url()), sql)).column("v").to_pylist() == [
        *values,
        None,
    ]
    # One column of '' is an empty line of COPY's output: a row all the same.
    table = run(collect(connection(pg_source.url()), "SELECT '' AS v FROM generate_series(1, 3)"))
    assert table.column("v").to_pylist() == ["", "", ""]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def test_timestamps_with_zone_are_utc_whatever_the_session_zone(pg_source: ServerSource) -> None:
    """A role whose TimeZone is not UTC: offsets of whole hours, halves, and the seconds of
    a local mean time (1850 in Amsterdam) all come back as the same instants."""
    role = pg_source.reader
    run(dbs.pg_admin_execute(pg_source, f"ALTER ROLE {role} SET TimeZone = 'Europe/Amsterdam'"))
    try:
        sql = (
            "SELECT timestamptz '2020-07-01 12:00:00+00' AS summer, "
            "timestamptz '1850-01-01 12:00:00+00' AS old, "
            "timestamptz '2020-01-01 00:00:00+05:30' AS kolkata"
        )
        source = connection(pg_source.url(role=pg_source.reader))
        row = run(collect(source, sql)).to_pylist()[0]
    finally:
        run(dbs.pg_admin_execute(pg_source, f"ALTER ROLE {role} RESET TimeZone"))
    assert row == {
        "summer": datetime(2020, 7, 1, 12, tzinfo=UTC),
        "old": datetime(1850, 1, 1, 12, tzinfo=UTC),
        "kolkata": datetime(2019, 12, 31, 18, 30, tzinfo=UTC),
    }


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 AS one;",
        "SELECT 1 AS one ;  \n ;",
        "SELECT 1 AS one -- a note at the end",
        "SELECT 1 AS one /* a note */",
        "SELECT $$ ) TO STDOUT; -- $$ AS one",
    ],
)
def test_a_query_ending_with_a_semicolon_or_a_comment_runs(
    pg_source: ServerSource, sql: str
) -> None:
    table = run(collect(connection(pg_source.url()), sql))
    assert table.num_rows == 1 and table.schema.names == ["one"]


def test_values_that_do_not_fit_say_to_cast(pg_source: ServerSource) -> None:
    source = connection(pg_source.url())
    for sql in (
        "SELECT 'infinity'::date AS d",
        "SELECT ARRAY[[1, 2], [3, 4]] AS grid",
        "SELECT time '24:00:00' AS midnight",
    ):
        with pytest.raises(QueryFailed, match=r"does not fit its type .* CAST it"):
            run(collect(source, sql))


def test_an_empty_result_still_carries_its_schema(pg_source: ServerSource) -> None:
    table = run(collect(connection(pg_source.url()), "SELECT id, note FROM orders WHERE false"))
    assert table.num_rows == 0
    assert table.schema == pa.schema([("id", pa.int32()), ("note", pa.string())])


def test_batches_are_cut_at_batch_rows_across_copy_blocks(pg_source: ServerSource) -> None:
    sql = "SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 200000) g"
    limits = QueryLimits(timeout_seconds=60, max_rows=10**6, max_bytes=10**9)

    async def sizes() -> list[int]:
        return [
            b.num_rows async for b in stream_query(connection(pg_source.url()), sql, limits, 30_000)
        ]

    found = run(sizes())
    assert sum(found) == 200_000
    assert all(n == 30_000 for n in found[:-1]) and 0 < found[-1] <= 30_000


def test_the_row_cap_stops_a_copy_at_exactly_the_cap(pg_source: ServerSource) -> None:
    limits = QueryLimits(timeout_seconds=60, max_rows=123_457, max_bytes=10**9)
    sql = "SELECT g FROM generate_series(1, 1000000) g"

    async def consume() -> int:
        rows = 0
        with pytest.raises(QueryFailed, match="more than 123,457 rows"):
            async for batch in stream_query(connection(pg_source.url()), sql, limits):
                rows += batch.num_rows
        return rows

    assert run(consume()) == 123_457


def test_the_byte_cap_stops_a_copy(pg_source: ServerSource) -> None:
    limits = QueryLimits(timeout_seconds=60, max_rows=10**8, max_bytes=2 * 1024**2)
    sql = "SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 1000000) g"
    with pytest.raises(QueryFailed, match="larger than 2 MiB"):
        run(collect(connection(pg_source.url()), sql, limits))


def test_the_timeout_stops_a_copy_that_has_already_sent_rows(pg_source: ServerSource) -> None:
    """Rows come as they are made, slowly: some are sent, then the statement timeout ends
    the COPY."""
    limits = QueryLimits(timeout_seconds=2, max_rows=10**8, max_bytes=10**9)
    sql = (
        "SELECT g, repeat('x', 20000) AS pad, pg_sleep(0.001) AS nap "
        "FROM generate_series(1, 1000000) g"
    )

    async def consume() -> int:
        rows = 0
        with pytest.raises(QueryFailed, match="statement timeout"):
            async for batch in stream_query(connection(pg_source.url()), sql, limits, 100):
                rows += batch.num_rows
        return rows

    assert run(consume()) > 0


def test_stopping_mid_copy_leaves_no_task_behind(pg_source: ServerSource) -> None:
    async def stop_after_one() -> set[asyncio.Task[object]]:
        stream = stream_query(
            connection(pg_source.url()),
            "SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 5000000) g",
            QueryLimits(60, 10**8, 10**10),
            10_000,
        )
        await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        return asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]

    assert run(stop_after_one()) == set()


def test_array_items_reads_what_postgresql_writes() -> None:
    assert array_items('{a,"b c",NULL,"d\\"e","NULL","\\\\"}') == [
        "a",
        "b c",
        None,
        'd"e',
        "NULL",
        "\\",
    ]
    assert array_items("{}") == []
    assert array_items("[0:1]={1,2}") == ["1", "2"]
    with pytest.raises(ValueError, match="multi-dimensional"):
        array_items("{{1,2},{3,4}}")


def test_a_result_without_columns_is_empty(pg_source: ServerSource) -> None:
    table = run(collect(connection(pg_source.url()), "SELECT FROM orders"))
    assert table.num_columns == 0 and table.num_rows == 0

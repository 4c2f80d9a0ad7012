"""Analysis code asks the backend for data (`sql()`, `tables()`, `columns()`, issue 25): the
worker holds no credential; the backend's answerer runs the query and the rows cross the
worker's channel as Arrow, one frame per ask, through the supervisor (local workers and
the sandbox service's).

The answerer here serves Arrow tables held in memory: what is under test is the channel,
not a database (tests/sources test the engines against real PostgreSQL and MariaDB).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from app.sandbox import AskRefused, QueryRecord, SandboxWorker
from app.sandbox.protocol import QUERY_FRAME_BYTES

ORDERS = pa.table(
    {
        "id": pa.array(range(1, 6), pa.int64()),
        "region": ["north", "south", None, "east", "west"],
        "amount": [10.5, 20.25, 30.0, None, 50.0],
        "placed": pa.array([1_700_000_000_000_000 + i for i in range(5)], pa.timestamp("us")),
    }
)
# More than one frame's worth of rows (about 3 frames).
BIG = pa.table({"n": pa.array(range(1_200_000), pa.int64()), "x": pa.array([0.5] * 1_200_000)})


class MemoryAnswerer:
    """Answers queries by table name (`SELECT * FROM <name>`) from Arrow tables."""

    def __init__(self, tables: dict[str, pa.Table]) -> None:
        self.tables = tables
        self.records: list[QueryRecord] = []
        self.pulled = 0  # batches handed out
        self.closed = 0  # queries stopped before their end
        self.rooms: list[int | None] = []

    def query(
        self, sql: str, source: str | None, room: int | None, deadline: float
    ) -> Iterator[pa.RecordBatch]:
        self.rooms.append(room)
        name = sql.split()[-1]
        if source not in (None, "shop"):
            raise AskRefused(f"no data source is called {source!r}; this project has: shop")
        if name not in self.tables:
            self.records.append(QueryRecord("shop", sql, 0, 1, f'relation "{name}" does not exist'))
            raise AskRefused(f'relation "{name}" does not exist')
        return self._batches(sql, self.tables[name])

    def _batches(self, sql: str, table: pa.Table) -> Iterator[pa.RecordBatch]:
        started, rows, finished = time.monotonic(), 0, False
        try:
            batches = table.to_batches(max_chunksize=100_000) or [
                pa.RecordBatch.from_pylist([], table.schema)
            ]
            for batch in batches:
                self.pulled += 1
                rows += batch.num_rows
                yield batch
            finished = True
        finally:
            self.closed += not finished
            duration = round((time.monotonic() - started) * 1000)
            self.records.append(QueryRecord("shop", sql, rows, duration))

    def lookup(self, what: str, source: str | None, table: str | None) -> list[dict[str, Any]]:
        if what == "tables":
            return [{"name": name, "row_estimate": t.num_rows} for name, t in self.tables.items()]
        if table not in self.tables:
            raise AskRefused(f"no table {table!r}")
        return [{"name": f.name, "type": str(f.type)} for f in self.tables[table].schema]

    def take_records(self) -> list[QueryRecord]:
        records, self.records = self.records, []
        return records


@pytest.fixture
def answerer() -> MemoryAnswerer:
    empty = pa.table({"id": pa.array([], pa.int64()), "name": pa.array([], pa.string())})
    return MemoryAnswerer({"orders": ORDERS, "big": BIG, "nothing": empty})


def test_sql_returns_the_rows_as_a_data_frame(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    code = (
        "df = sql('SELECT * FROM orders', source='shop')\n"
        "print(len(df), list(df.columns))\n"
        "print(df['region'].tolist(), df['amount'].isna().sum(), str(df['placed'].dtype))\n"
        "print(int(df['id'].sum()))"
    )
    result = worker.run(code, answerer=answerer)
    assert result.error is None, result.error
    assert result.logs.splitlines() == [
        "5 ['id', 'region', 'amount', 'placed']",
        "['north', 'south', nan, 'east', 'west'] 1 datetime64[us]",
        "15",
    ]
    assert result.queries == (
        {
            "source": "shop",
            "sql": "SELECT * FROM orders",
            "rows": 5,
            "duration_ms": result.queries[0]["duration_ms"],
            "error": None,
        },
    )


def test_a_result_of_many_frames_arrives_whole_and_is_read_as_it_is_taken(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    assert BIG.nbytes > 2 * QUERY_FRAME_BYTES
    result = worker.run(
        "big = sql('SELECT * FROM big')\nprint(len(big), int(big['n'].sum()))",
        answerer=answerer,
    )
    assert result.error is None, result.error
    assert result.logs == f"1200000 {sum(range(1_200_000))}\n"
    assert answerer.pulled == 12 and answerer.closed == 0
    assert result.queries[0]["rows"] == 1_200_000


def test_into_streams_the_result_into_a_parquet_file_of_the_workspace(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    code = (
        "import pandas as pd\n"
        "path = sql('SELECT * FROM big', into='exports/big.parquet')\n"
        "back = pd.read_parquet(path)\n"
        "print(path, len(back), int(back['n'].max()))"
    )
    result = worker.run(code, answerer=answerer)
    assert result.error is None, result.error
    assert result.logs == "exports/big.parquet 1200000 1199999\n"
    assert (worker.workspace / "exports" / "big.parquet").is_file()
    assert not list((worker.workspace / "exports").glob(".*partial"))
    room = answerer.rooms[-1]
    assert room is not None and room > 0  # bounded by the workspace's free quota


def test_an_empty_result_still_has_its_columns(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    result = worker.run(
        "df = sql('SELECT * FROM nothing')\nprint(len(df), list(df.columns))", answerer=answerer
    )
    assert result.error is None, result.error
    assert result.logs == "0 ['id', 'name']\n"


def test_a_refused_query_is_an_error_the_code_sees_with_the_databases_message(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    caught = worker.run(
        "try:\n    sql('SELECT * FROM missing')\nexcept Exception as e:\n    print('caught:', e)",
        answerer=answerer,
    )
    assert caught.error is None, caught.error
    assert caught.logs == 'caught: relation "missing" does not exist\n'
    failed = worker.run("sql('SELECT * FROM missing')", answerer=answerer)
    assert failed.error is not None and 'relation "missing" does not exist' in failed.error
    assert failed.queries[0]["error"] == 'relation "missing" does not exist'
    unknown = worker.run("sql('SELECT * FROM orders', source='crm')", answerer=answerer)
    assert unknown.error is not None and "no data source is called 'crm'" in unknown.error
    # The channel is still in step after refusals: the next query works.
    after = worker.run("print(len(sql('SELECT * FROM orders')))", answerer=answerer)
    assert after.logs == "5\n"


def test_tables_and_columns_look_the_schema_up(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    code = (
        "t = tables()\nprint(t['name'].tolist())\n"
        "c = columns('orders')\nprint(c['name'].tolist())\n"
        "try:\n    columns('nope')\nexcept Exception as e:\n    print(e)"
    )
    result = worker.run(code, answerer=answerer)
    assert result.error is None, result.error
    assert result.logs.splitlines() == [
        "['orders', 'big', 'nothing']",
        "['id', 'region', 'amount', 'placed']",
        "no table 'nope'",
    ]
    assert result.queries == ()  # a lookup is not a query of the database


def test_without_data_sources_sql_says_how_to_add_one(worker: SandboxWorker) -> None:
    result = worker.run("sql('SELECT 1')")
    assert result.error is not None
    assert "this project has no data sources" in result.error


def test_code_may_use_the_helpers_names_for_its_own_variables(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    taken = worker.run(
        "columns = ['a', 'b']\nsql = 'SELECT 1'\nprint(columns, sql)", answerer=answerer
    )
    assert taken.error is None, taken.error
    assert taken.logs == "['a', 'b'] SELECT 1\n"
    # Given back: the helper returns at the next step.
    worker.run("del sql", answerer=answerer)
    back = worker.run("print(len(sql('SELECT * FROM orders')))", answerer=answerer)
    assert back.logs == "5\n"


def test_bad_arguments_are_refused_in_the_worker(
    worker: SandboxWorker, answerer: MemoryAnswerer
) -> None:
    code = (
        "for call in (lambda: sql(42), lambda: sql('SELECT 1', into='/etc/x.parquet'),\n"
        "             lambda: sql('SELECT 1', into='../up.parquet'),\n"
        "             lambda: sql('SELECT 1', into='x.csv')):\n"
        "    try:\n        call()\n    except Exception as e:\n        print(e)"
    )
    result = worker.run(code, answerer=answerer)
    assert result.error is None, result.error
    assert result.logs.splitlines() == [
        "sql() needs the query as a string, e.g. sql('SELECT 1')",
        "into= must name a file inside the workspace, e.g. 'data/orders.parquet'",
        "into= must name a file inside the workspace, e.g. 'data/orders.parquet'",
        "into= is a .parquet file name in the workspace, e.g. into='orders.parquet'",
    ]
    assert answerer.rooms == []  # none reached the backend

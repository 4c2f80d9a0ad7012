"""Browsing a source's schema (issue 42), on both stacks against this machine's real
PostgreSQL and MariaDB (and a DuckDB file): the database's own COMMENTs describe tables and
columns until the team writes its own (and reach the agent's prompt), a table's sample rows
come through the agent's read-only path, capped, to any member, and a row count the
database does not keep reads null, not 0 or -1."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import asyncpg
import duckdb
import pytest

from app.agent import prompting
from app.runs.context import _source_info
from app.sources import service
from app.sources.sampling import CONCURRENT_SAMPLES
from tests.api.test_sources import _add, reachable  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.server import LiveServer
from tests.support.services import POSTGRES_ADMIN_DSN
from tests.support.source_databases import (
    ServerSource,
    mariadb_source,
    pg_admin_execute,
    postgres_source,
)

PG_LOAD = [
    "CREATE TABLE orders (id int PRIMARY KEY, amount numeric(10, 2), note text)",
    "INSERT INTO orders SELECT i, i * 1.5, 'note ' || i FROM generate_series(1, 80) i",
    "COMMENT ON TABLE orders IS 'One row per order, from the web shop'",
    "COMMENT ON COLUMN orders.amount IS 'Net amount in EUR'",
]
MYSQL_LOAD = [
    "CREATE TABLE orders (id int PRIMARY KEY, amount decimal(10, 2) "
    "COMMENT 'Net amount in EUR', note text) COMMENT 'One row per order, from the web shop'",
    "INSERT INTO orders SELECT seq, seq * 1.5, CONCAT('note ', seq) FROM seq_1_to_80",
    "CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100",
]


@pytest.fixture(scope="module")
def commented_pg() -> Iterator[ServerSource]:
    """PostgreSQL with commented orders, and `fresh`, a table never analysed (reltuples -1)."""
    for source in postgres_source(PG_LOAD):
        asyncio.run(
            pg_admin_execute(source, f"SET ROLE {source.writer}; CREATE TABLE fresh (x int)")
        )
        yield source


@pytest.fixture(scope="module")
def commented_mysql() -> Iterator[ServerSource]:
    yield from mariadb_source(MYSQL_LOAD)


@pytest.fixture(params=["postgresql", "mysql"])
def commented(request: pytest.FixtureRequest) -> ServerSource:
    """Each server's commented database in turn."""
    kind = "commented_pg" if request.param == "postgresql" else "commented_mysql"
    found: ServerSource = request.getfixturevalue(kind)
    return found


def _schema(api: Api, source_id: str) -> dict[str, dict[str, Any]]:
    response = api.get(f"/sources/{source_id}/schema")
    assert response.status_code == 200, response.text
    return {t["name"]: t for t in response.json()["tables"]}


def _described(table: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    """{"": the table's (description, source), column: (description, source)}."""
    return {
        "": (table["description"], table["description_source"]),
        **{c["name"]: (c["description"], c["description_source"]) for c in table["columns"]},
    }


def _prompt(live: LiveServer, project_id: str) -> str:
    async def catalog() -> str:
        async with live.state.session_factory() as db:
            sources = await service.catalog_of(db, uuid.UUID(project_id))
        return prompting.render_system_prompt(
            files=[],
            history=[],
            authorized_imports=["pandas"],
            sources=[_source_info(s) for s in sources],
        )

    return str(live.call(catalog()))


def _orders_in(prompt: str) -> str:
    """What the prompt says of the orders table: its line and its columns' line."""
    start = prompt.index(".orders (")
    return prompt[start : prompt.index("\n", prompt.index("columns:", start))]


def test_the_databases_comments_describe_until_the_team_writes_its_own(
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    commented: ServerSource,
) -> None:
    database = commented
    project = alice.project()
    source = _add(alice, project, "shop", database.url())
    assert source["status"] == "ready", source
    orders = _schema(alice, source["id"])["orders"]
    assert _described(orders) == {
        "": ("One row per order, from the web shop", "database"),
        "id": ("", None),
        "amount": ("Net amount in EUR", "database"),
        "note": ("", None),
    }
    # The agent reads them as it reads the team's.
    said = _orders_in(_prompt(reachable, project["id"]))
    assert ": One row per order, from the web shop" in said
    assert "(Net amount in EUR)" in said

    team = {
        "name": "orders",
        "description": "Orders, test ones excluded",
        "columns": [{"name": "amount", "description": "Net of VAT, in euros"}],
    }
    described = alice.patch(f"/sources/{source['id']}/schema", json={"tables": [team]})
    assert described.status_code == 200, described.text
    # A check reads the comments again; the team's words still win.
    assert alice.post(f"/sources/{source['id']}/check").json()["ok"] is True
    orders = _schema(alice, source["id"])["orders"]
    assert _described(orders)[""] == ("Orders, test ones excluded", "team")
    assert _described(orders)["amount"] == ("Net of VAT, in euros", "team")
    said = _orders_in(_prompt(reachable, project["id"]))
    assert "Orders, test ones excluded" in said and "(Net of VAT, in euros)" in said
    assert "web shop" not in said and "Net amount in EUR" not in said

    # The team's description removed: the database's comment shows again.
    cleared = {"tables": [{"name": "orders", "columns": [{"name": "amount", "description": ""}]}]}
    assert alice.patch(f"/sources/{source['id']}/schema", json=cleared).status_code == 200
    assert _described(_schema(alice, source["id"])["orders"])["amount"] == (
        "Net amount in EUR",
        "database",
    )


def test_any_member_reads_a_tables_sample_rows_capped(
    alice: Api,
    bob: Api,
    reachable: LiveServer,  # noqa: F811
    commented: ServerSource,
) -> None:
    database = commented
    project = alice.project()
    source = _add(alice, project, "shop", database.url(role=database.reader))
    assert source["status"] == "ready", source
    url = f"/sources/{source['id']}/sample"

    # Not a member: the source does not exist.
    assert bob.get(url, params={"table": "orders"}).status_code == 404
    me = bob.get("/auth/me").json()
    added = alice.post(
        f"/projects/{project['id']}/members", json={"email": me["email"], "role": "viewer"}
    )
    assert added.status_code == 201, added.text

    sample = bob.get(url, params={"table": "orders", "limit": 3})
    assert sample.status_code == 200, sample.text
    body = sample.json()
    assert body["table"] == "orders" and body["limit"] == 3
    assert [c["name"] for c in body["columns"]] == ["id", "amount", "note"]
    assert body["rows"] == [[1, 1.5, "note 1"], [2, 3.0, "note 2"], [3, 4.5, "note 3"]]
    # The default and the cap.
    assert len(bob.get(url, params={"table": "orders"}).json()["rows"]) == 20
    assert len(bob.get(url, params={"table": "orders", "limit": 50}).json()["rows"]) == 50
    too_many = bob.get(url, params={"table": "orders", "limit": 51})
    assert too_many.status_code == 422, too_many.text
    missing = bob.get(url, params={"table": "no_such_table"})
    assert (missing.status_code, missing.json()["code"]) == (404, "table_not_found")
    assert bob.get(url).status_code == 422  # `table` is needed


def test_a_row_count_the_database_does_not_keep_is_null(
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    commented_pg: ServerSource,
    commented_mysql: ServerSource,
) -> None:
    """PostgreSQL's reltuples is -1 for a table never analysed, MariaDB keeps no count for
    a view: both are null (the browser says "unknown"), never -1 or 0; a counted table
    keeps its count."""
    project = alice.project()
    pg = _add(alice, project, "pg", commented_pg.url())
    maria = _add(alice, project, "maria", commented_mysql.url())
    pg_tables = _schema(alice, pg["id"])
    assert pg_tables["fresh"]["row_estimate"] is None
    assert pg_tables["orders"]["row_estimate"] == 80
    maria_tables = _schema(alice, maria["id"])
    assert maria_tables["big_orders"]["row_estimate"] is None
    assert maria_tables["orders"]["row_estimate"] is not None
    # A view's TABLE_COMMENT ("VIEW") is not a description.
    assert maria_tables["big_orders"]["description_source"] is None


def test_a_duckdb_files_comments_describe_it_and_its_rows_can_be_sampled(
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    path = source_files[0].parent / f"commented-{uuid.uuid4().hex[:8]}.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales (day DATE, amount DECIMAL(10, 2))")
    con.execute("INSERT INTO sales VALUES ('2026-03-01', 12.50), ('2026-03-02', 7.25)")
    con.execute("CREATE VIEW big_sales AS SELECT * FROM sales WHERE amount > 10")
    con.execute("COMMENT ON TABLE sales IS 'One row per day'")
    con.execute("COMMENT ON COLUMN sales.amount IS 'Takings in EUR'")
    con.close()
    source = _add(alice, alice.project(), "duck", f"duckdb:///{path}")
    assert source["status"] == "ready", source
    tables = _schema(alice, source["id"])
    assert _described(tables["sales"]) == {
        "": ("One row per day", "database"),
        "day": ("", None),
        "amount": ("Takings in EUR", "database"),
    }
    assert tables["big_sales"]["row_estimate"] is None
    sample = alice.get(f"/sources/{source['id']}/sample", params={"table": "sales"})
    assert sample.status_code == 200, sample.text
    assert sample.json()["rows"] == [["2026-03-01", 12.5], ["2026-03-02", 7.25]]


def test_samples_past_the_pool_answer_503_with_retry_after(
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    commented_pg: ServerSource,
) -> None:
    """Four samples wait on a table another transaction locks; the fifth is not queued
    behind them (503 samples_busy, Retry-After), and the four end once the lock goes."""
    source = _add(alice, alice.project(), "shop", commented_pg.url())
    url = f"/sources/{source['id']}/sample"
    locked, release = threading.Event(), threading.Event()

    async def hold() -> None:
        conn = await asyncpg.connect(
            POSTGRES_ADMIN_DSN.rsplit("/", 1)[0] + f"/{commented_pg.database}"
        )
        try:
            async with conn.transaction():
                await conn.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
                locked.set()
                await asyncio.to_thread(release.wait, 120)
        finally:
            await conn.close()

    async def waiting() -> int:
        conn = await asyncpg.connect(POSTGRES_ADMIN_DSN)
        try:
            return int(
                await conn.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 "
                    "AND application_name = 'workbench' AND wait_event_type = 'Lock'",
                    commented_pg.database,
                )
            )
        finally:
            await conn.close()

    holder = threading.Thread(target=lambda: asyncio.run(hold()))
    holder.start()
    with ThreadPoolExecutor(CONCURRENT_SAMPLES) as pool:
        try:
            assert locked.wait(30)
            running = [
                pool.submit(alice.get, url, params={"table": "orders", "limit": 1})
                for _ in range(CONCURRENT_SAMPLES)
            ]
            # A guard against hanging, not a timing: the four are seen waiting on the lock.
            deadline = time.monotonic() + 30
            while asyncio.run(waiting()) < CONCURRENT_SAMPLES:
                assert time.monotonic() < deadline, "the samples never reached the lock"
                time.sleep(0.05)
            busy = alice.get(url, params={"table": "orders", "limit": 1})
            assert busy.status_code == 503, busy.text
            assert busy.json()["code"] == "samples_busy" and busy.headers["Retry-After"]
        finally:
            release.set()
            holder.join(30)
        for done in running:
            answer = done.result(60)
            assert answer.status_code == 200 and answer.json()["rows"] == [[1, 1.5, "note 1"]]
    assert alice.get(url, params={"table": "orders", "limit": 1}).status_code == 200

"""A table's sample rows (GET /sources/{id}/sample) attacked through its table name, on both
stacks against real PostgreSQL and MariaDB: a table whose very name is SQL is read as the
table it is (its name a quoted identifier, never text pasted into the statement), and a name
the last check did not list never reaches the database."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from app.sources.sampling import statement
from tests.api.test_sources import _add, reachable  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.server import LiveServer
from tests.support.source_databases import (
    ServerSource,
    mariadb_source,
    mysql_count,
    pg_count,
    postgres_source,
)

PG_HOSTILE = 'we"ird; DROP TABLE orders; --'
MYSQL_HOSTILE = "we`ird; DROP TABLE orders; --"


@pytest.fixture(scope="module")
def hostile_pg() -> Iterator[ServerSource]:
    yield from postgres_source(
        [
            "CREATE TABLE orders (id int)",
            "INSERT INTO orders VALUES (1), (2)",
            'CREATE TABLE "we""ird; DROP TABLE orders; --" (x text)',
            """INSERT INTO "we""ird; DROP TABLE orders; --" VALUES ('inside')""",
        ]
    )


@pytest.fixture(scope="module")
def hostile_mysql() -> Iterator[ServerSource]:
    yield from mariadb_source(
        [
            "CREATE TABLE orders (id int)",
            "INSERT INTO orders VALUES (1), (2)",
            "CREATE TABLE `we``ird; DROP TABLE orders; --` (x text)",
            "INSERT INTO `we``ird; DROP TABLE orders; --` VALUES ('inside')",
        ]
    )


def test_names_are_quoted_identifiers_in_each_dialect() -> None:
    assert statement("postgresql", "public", PG_HOSTILE, 5) == (
        'SELECT * FROM "public"."we""ird; DROP TABLE orders; --" LIMIT 5'
    )
    assert statement("mysql", "shop", MYSQL_HOSTILE, 5) == (
        "SELECT * FROM `shop`.`we``ird; DROP TABLE orders; --` LIMIT 5"
    )
    assert statement("sqlite", "main", 'a"b', 1) == 'SELECT * FROM "main"."a""b" LIMIT 1'


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_a_table_named_like_sql_is_sampled_as_the_table_it_is(
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    hostile_pg: ServerSource,
    hostile_mysql: ServerSource,
    kind: str,
) -> None:
    database, name = (
        (hostile_pg, PG_HOSTILE) if kind == "postgresql" else (hostile_mysql, MYSQL_HOSTILE)
    )
    source = _add(alice, alice.project(), "shop", database.url())
    assert source["status"] == "ready", source
    url = f"/sources/{source['id']}/sample"
    sample = alice.get(url, params={"table": name})
    assert sample.status_code == 200, sample.text
    assert sample.json()["rows"] == [["inside"]]
    # Names the last check did not list are refused before any statement is made.
    for table, schema in [
        ("orders; DROP TABLE orders; --", None),
        ("orders", "x; DROP TABLE orders; --"),
        ('orders" UNION SELECT 1 --', None),
    ]:
        params = {"table": table} | ({"schema": schema} if schema else {})
        refused = alice.get(url, params=params)
        assert (refused.status_code, refused.json()["code"]) == (404, "table_not_found")
    count = pg_count if kind == "postgresql" else mysql_count
    assert asyncio.run(count(database)) == 2

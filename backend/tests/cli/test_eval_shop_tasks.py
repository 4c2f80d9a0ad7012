"""The shop task set (backend/evals/shop): what is committed is what the generator writes,
its questions need the database, and its SQL loads and answers alike on this machine's real
MariaDB and PostgreSQL, not only on the SQLite file the answers were computed on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncpg
import pandas as pd
import pymysql
import pytest

from app.cli.eval_dabench import load_tasks
from evals.shop.generate import generate, solve
from evals.shop.schema import dump, split
from tests.support import source_databases
from tests.support.source_databases import ServerSource

SHOP = Path(__file__).parents[2] / "evals" / "shop"
Query = Callable[[str], pd.DataFrame]


def expected_answers() -> dict[str, str]:
    """Each task's labels, written as its solution's final answer writes them."""
    return {
        task.id: " ".join(f"@{name}[{value}]" for name, value in task.answers)
        for task in load_tasks(SHOP / "tasks.jsonl")
    }


def test_the_committed_shop_set_is_what_the_generator_writes(tmp_path: Path) -> None:
    written = generate(tmp_path)

    assert sorted(p.name for p in written) == [
        "shop.db",
        "shop.sql",
        "solutions.jsonl",
        "tasks.jsonl",
    ]
    stale = "is stale: run `uv run python -m evals.shop.generate` in backend/"
    for path in written:
        committed = SHOP / path.name
        if path.suffix == ".db":  # its bytes vary with SQLite's version; its content may not
            assert dump(committed) == dump(path), f"{committed} {stale}"
        else:
            assert committed.read_bytes() == path.read_bytes(), f"{committed} {stale}"


def test_the_shop_set_is_dabench_shaped_and_needs_the_database() -> None:
    tasks = load_tasks(SHOP / "tasks.jsonl")
    rows = [json.loads(line) for line in (SHOP / "tasks.jsonl").read_text().splitlines()]
    solutions = {
        row["id"]: row["solution"]
        for row in map(json.loads, (SHOP / "solutions.jsonl").read_text().splitlines())
    }

    assert 20 <= len(tasks) <= 30
    for task, row in zip(tasks, rows, strict=True):
        assert task.sources == ("shop",) and not task.files
        assert set(row) >= {"id", "question", "constraints", "format", "source", "answers"}
        for name, _ in task.answers:
            assert f"@{name}[" in task.format
        solution = solutions[task.id]
        assert 'source="shop"' in solution and "final_answer(" in solution
        assert "read_csv" not in solution  # the database answers, not a file
    questions = [t.question for t in tasks]
    assert not [a for a in questions for b in questions if a != b and a in b]

    values = [v for t in tasks for _, v in t.answers]
    assert sum(len(t.answers) > 1 for t in tasks) >= 8
    assert any(v.isdigit() for v in values) and any("." in v for v in values)
    assert any(not v.replace(".", "").replace("-", "").isdigit() for v in values)
    code = "\n".join(solutions.values())
    for feature in ("JOIN", "GROUP BY", "IS NULL", "LEFT JOIN", "HAVING", "LIMIT 3", "'2024-"):
        assert feature in code, feature


# -- the same answers from the servers ----------------------------------------------------------


def mariadb_query(source: ServerSource) -> Iterator[Query]:
    conn = pymysql.connect(
        host=source.host,
        port=source.port,
        user=source.reader,
        password=source.password,
        database=source.database,
    )

    def query(text: str) -> pd.DataFrame:
        with conn.cursor() as cursor:
            cursor.execute(text)
            names = [d[0] for d in cursor.description]
            return pd.DataFrame(list(cursor.fetchall()), columns=names)

    try:
        yield query
    finally:
        conn.close()


def postgres_query(source: ServerSource) -> Iterator[Query]:
    loop = asyncio.new_event_loop()
    conn = loop.run_until_complete(
        asyncpg.connect(
            host=source.host,
            port=source.port,
            user=source.reader,
            password=source.password,
            database=source.database,
        )
    )

    def query(text: str) -> pd.DataFrame:
        statement = loop.run_until_complete(conn.prepare(text))
        names = [a.name for a in statement.get_attributes()]
        rows = loop.run_until_complete(statement.fetch())
        return pd.DataFrame([tuple(r) for r in rows], columns=names)

    try:
        yield query
    finally:
        loop.run_until_complete(conn.close())
        loop.close()


@pytest.mark.filterwarnings("ignore:Unknown table")  # the script's DROP TABLE IF EXISTS
@pytest.mark.parametrize("kind", ["mariadb", "postgresql"])
def test_the_script_loads_into_mariadb_and_postgresql_and_answers_alike(kind: str) -> None:
    load = split((SHOP / "shop.sql").read_text(encoding="utf-8"))
    make, connect = {
        "mariadb": (source_databases.mariadb_source, mariadb_query),
        "postgresql": (source_databases.postgres_source, postgres_query),
    }[kind]

    for server in make(load):
        for query in connect(server):
            assert int(query("SELECT COUNT(*) FROM order_items").iloc[0, 0]) > 5000
            assert solve(query) == expected_answers()

"""The shop task set (backend/evals/shop): what is committed is what the generator writes,
its questions need the database, and its SQL loads and answers alike on this machine's real
MariaDB and PostgreSQL, not only on the SQLite file the answers were computed on, through
the engine that answers sql() in the workbench."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from app.cli.eval_dabench import load_tasks
from evals.shop.generate import generate, solve
from evals.shop.schema import dump, split
from tests.sources.engine import collect, connection, run
from tests.support import source_databases

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


# -- the same answers through the product's query engine ----------------------------------------


def engine_query(url: str) -> Query:
    """A `query` through the engine that answers sql() in a run: the statement parsed and
    run read-only, the result as Arrow, then as the DataFrame the agent's code gets."""
    source = connection(url, files=SHOP)

    def query(text: str) -> pd.DataFrame:
        return run(collect(source, text)).to_pandas()

    return query


def servers(kind: str) -> Iterator[str]:
    """The URL of a database holding the committed script: the SQLite file, or the script
    loaded into a fresh database on this machine's MariaDB or PostgreSQL (dropped after)."""
    if kind == "sqlite":
        yield f"sqlite:///{SHOP / 'shop.db'}"
        return
    load = split((SHOP / "shop.sql").read_text(encoding="utf-8"))
    make = {
        "mariadb": source_databases.mariadb_source,
        "postgresql": source_databases.postgres_source,
    }
    for server in make[kind](load):
        yield server.url(server.reader)


@pytest.mark.filterwarnings("ignore:Unknown table")  # the script's DROP TABLE IF EXISTS
@pytest.mark.parametrize("kind", ["sqlite", "mariadb", "postgresql"])
def test_every_solution_answers_alike_on_each_kind_of_database(kind: str) -> None:
    for url in servers(kind):
        query = engine_query(url)
        assert int(query("SELECT COUNT(*) AS n FROM order_items")["n"][0]) > 5000
        assert solve(query) == expected_answers()

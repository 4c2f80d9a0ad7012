"""`workbench cells` and `workbench sources sample` as a user runs them, on a real server: a
Python cell's output and last expression print as `workbench ask` prints a run, an SQL cell
queries a source, a failing cell exits 1 with its error, and a table's first rows print as a
table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import SALES
from tests.api.test_sources import reachable  # noqa: F401  (a fixture)
from tests.cli.test_cli import Cli, cli, runs_of  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.server import LiveServer

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_cells_run_python_and_sql_and_print_like_ask(
    cli: Cli,  # noqa: F811
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    project = alice.project("Shop")
    assert alice.upload(project["id"], "sales.csv", SALES).status_code == 201
    added = alice.post(
        f"/projects/{project['id']}/sources",
        json={"name": "lite", "url": f"sqlite:///{source_files[0]}"},
    )
    assert added.status_code == 201, added.text
    session = alice.post(
        f"/projects/{project['id']}/sessions", json={"title": "Regional cells"}
    ).json()

    code = "import pandas as pd\nsales = pd.read_csv('sales.csv')\nprint('rows:', len(sales))\n"
    last = "sales.groupby('region')['revenue'].sum()"
    ran = cli.run("cells", "Regional", "--python", code + last)
    assert ran.code == 0, ran.stderr
    # The code, what it printed, the last expression's table, the end, as `ask` shows a run.
    assert "sales = pd.read_csv('sales.csv')" in ran.stdout
    assert "rows: 4" in ran.stdout
    assert "North" in ran.stdout and "2510.75" in ran.stdout
    assert "✓ succeeded" in ran.stdout
    assert ran.stdout.index("rows: 4") < ran.stdout.index("2510.75")
    [run] = runs_of(alice, session["id"])
    assert run["kind"] == "cell" and run["cell"]["language"] == "python"

    # From standard input; the session's variables are still there.
    piped = cli.run("cells", session["id"], "--python", "-", stdin="print(sorted(sales['region']))")
    assert piped.code == 0 and "['North', 'North', 'South', 'South']" in piped.stdout

    sql = "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region"
    queried = cli.run("cells", "Regional", "--sql", sql, "--source", "lite")
    assert queried.code == 0, queried.stderr
    assert "2 rows, kept as df_sql_1" in queried.stdout
    assert "north" in queried.stdout and "south" in queried.stdout

    failed = cli.run("cells", "Regional", "--python", "print(undefined_name)")
    assert failed.code == 1 and "undefined_name" in failed.stderr

    # Usage mistakes: neither or both languages, a source for Python, an unknown source.
    for args in (
        (),
        ("--python", "1", "--sql", "SELECT 1"),
        ("--python", "1", "--source", "lite"),
        ("--python", "   "),
    ):
        refused = cli.run("cells", "Regional", *args)
        assert refused.code == 2, (args, refused.stderr)
    unknown = cli.run("cells", "Regional", "--sql", "SELECT 1", "--source", "nope")
    assert unknown.code == 1 and "no source 'nope'" in unknown.stderr


def test_sources_sample_prints_a_tables_first_rows(
    cli: Cli,  # noqa: F811
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    project = alice.project("Shop")
    added = alice.post(
        f"/projects/{project['id']}/sources",
        json={"name": "lite", "url": f"sqlite:///{source_files[0]}"},
    )
    assert added.status_code == 201, added.text
    sampled = cli.run("sources", "sample", "lite", "orders", "--rows", "3", "-p", "Shop")
    assert sampled.code == 0, sampled.stderr
    lines = [line.split() for line in sampled.stdout.strip().splitlines()]
    assert lines[0] == ["id", "region", "amount", "note"]
    assert lines[1:] == [
        ["1", "south", "1.5", "note", "1"],
        ["2", "north", "3.0", "note", "2"],
        ["3", "south", "4.5", "note", "3"],
    ]
    as_json = cli.run("sources", "sample", "lite", "orders", "-n", "1", "-p", "Shop", "--json")
    assert as_json.code == 0 and '"rows": [' in as_json.stdout

    missing = cli.run("sources", "sample", "lite", "nothing", "-p", "Shop")
    assert missing.code == 1 and missing.stderr.strip()
    too_many = cli.run("sources", "sample", "lite", "orders", "--rows", "500", "-p", "Shop")
    assert too_many.code == 2

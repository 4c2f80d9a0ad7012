"""`workbench eval` over a database: the shop task set (backend/evals/shop) loaded into a
fresh database on this machine's real MariaDB, added to the evaluation's project with
`--source`, and played through the real API and sandbox by the scripted LLM.

The generator's test checks every answer of the set on SQLite, MariaDB and PostgreSQL; this
one runs a representative part of it through the product (the CI's time is short): dates,
two-answer tasks, joins over four tables, the category tree, the many-to-many tags, a top
three, NULLs in a group-by, pandas finishing what the database returned.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from app.cli.evaluate import password_variable
from evals.shop.schema import split
from tests.conftest import Api
from tests.support import source_databases
from tests.support.eval_playbook import Playbook, read_jsonl
from tests.support.llm import ScriptedLLM
from tests.support.source_databases import ServerSource

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)

SHOP = Path(__file__).parents[2] / "evals" / "shop"
REFERENCE, SECOND = "openai/scripted", "openai/gpt-4o-mini"
CHOSEN = (
    "shop_orders_2024",
    "shop_top_category_2024",
    "shop_electronics_share_2024",
    "shop_top_products_units_2024",
    "shop_days_to_ship_2024",
    "shop_best_month_2023",
    "shop_eco_products",
    "shop_referred_customers",
    "shop_coupons_2024",
    "shop_region_revenue_per_customer",
)
TASK_LIST = [t for t in read_jsonl(SHOP / "tasks.jsonl") if t["id"] in CHOSEN]
PLAYBOOK = Playbook.of(TASK_LIST, SHOP / "solutions.jsonl", every=4)
PASSWORD = password_variable("shop")


@pytest.fixture(scope="module")
def shop_db() -> Iterator[ServerSource]:
    """The shop database, loaded from the committed shop.sql into a fresh MariaDB database."""
    load = [s for s in split((SHOP / "shop.sql").read_text()) if not s.startswith("DROP ")]
    yield from source_databases.mariadb_source(load)


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    path = tmp_path / "shop-tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TASK_LIST))
    return path


def reader_url(db: ServerSource) -> str:
    """The URL of the database's read-only user, without its password."""
    return f"mysql://{db.reader}@{db.host}:{db.port}/{db.database}"


def model_of(built: dict[str, Any], model: str) -> dict[str, Any]:
    return next(s for s in built["models"] if s["model"] == model)


def test_the_shop_set_runs_against_a_mariadb_source_and_scores_what_each_model_earns(
    run_eval: Callable[..., Result],
    player: Callable[[Callable[..., str]], None],
    llm: ScriptedLLM,
    alice: Api,
    shop_db: ServerSource,
    tasks: Path,
    tmp_path: Path,
) -> None:
    report = tmp_path / "report"
    common = [str(tasks), "--source", f"shop={reader_url(shop_db)}", "--report", str(report)]
    env = {PASSWORD: shop_db.password}
    player(PLAYBOOK.reference)

    first = run_eval(*common, "--model", REFERENCE, "--concurrency", "2", "--keep", env=env)

    assert first.exit_code == 0, first.output
    n = len(TASK_LIST)
    built = json.loads((report / "report.json").read_text())
    reference = model_of(built, REFERENCE)
    assert reference["runs"] == n == len(CHOSEN)
    assert reference["accuracy"] == 1.0 and reference["first_try_accuracy"] == 1.0
    assert built["sources"] == {"shop": reader_url(shop_db)}
    # The answers came from the database: the project holds the source, each run's step
    # its queries, and the prompt said where the data is.
    (project,) = alice.get("/projects").json()["items"]
    (source,) = alice.get(f"/projects/{project['id']}/sources").json()["items"]
    assert source["name"] == "shop" and source["status"] == "ready"
    assert source["access"] == "read_only_role"
    runs = [json.loads(line) for line in (report / "results.jsonl").read_text().splitlines()]
    for record in runs:
        (step,) = alice.get(f"/runs/{record['run_id']}").json()["steps"]
        assert step["queries"] and all(q["source"] == "shop" for q in step["queries"])
        assert all(q["error"] is None and q["rows"] > 0 for q in step["queries"])
    assert all('The data is in the database source "shop".' in p for p in llm.prompts())
    # The password went to the server only.
    for path in report.iterdir():
        assert shop_db.password not in path.read_text()
    assert shop_db.password not in first.output

    # A second model joins the report, against a project of its own (the first was kept).
    llm.requests.clear()
    player(PLAYBOOK.fumbling)
    both = run_eval(*common, "--model", REFERENCE, "--model", SECOND, env=env)

    assert both.exit_code == 0, both.output
    assert len(llm.requests) == n + len(PLAYBOOK.error_first)
    built = json.loads((report / "report.json").read_text())
    second = model_of(built, SECOND)
    wrong, fumbled = len(PLAYBOOK.wrong), len(PLAYBOOK.error_first)
    assert (second["runs"], second["failed_runs"]) == (n, 0)
    assert second["correct"] == n - wrong
    assert second["first_try_correct"] == n - wrong - fumbled
    assert second["mean_steps"] == round((n + fumbled) / n, 2)
    assert model_of(built, REFERENCE)["accuracy"] == 1.0


def test_a_task_set_over_a_database_needs_its_source(
    run_eval: Callable[..., Result], llm: ScriptedLLM, alice: Api, tasks: Path, tmp_path: Path
) -> None:
    report = ["--report", str(tmp_path / "r")]

    missing = run_eval(str(tasks), *report)

    assert missing.exit_code == 2
    said = " ".join(missing.output.split())
    assert "data source(s) shop" in said and "--source shop=" in said and PASSWORD in said

    in_url = run_eval(str(tasks), *report, "--source", "shop=mysql://u:secret@127.0.0.1/shop")

    assert in_url.exit_code == 2
    assert "leave the password out of the URL" in " ".join(in_url.output.split())
    assert "secret" not in in_url.output

    malformed = run_eval(str(tasks), *report, "--source", "mysql://u@127.0.0.1/shop")

    assert malformed.exit_code == 2 and "expected NAME=URL" in malformed.output
    # Nothing was set up, nothing asked.
    assert llm.requests == []
    assert alice.get("/projects").json()["total"] == 0


def test_a_source_that_fails_its_check_stops_the_evaluation_before_any_task(
    run_eval: Callable[..., Result],
    llm: ScriptedLLM,
    alice: Api,
    shop_db: ServerSource,
    tasks: Path,
    tmp_path: Path,
) -> None:
    result = run_eval(
        str(tasks),
        "--source",
        f"shop={reader_url(shop_db)}",
        "--report",
        str(tmp_path / "r"),
        env={PASSWORD: "not-the-password"},
    )

    assert result.exit_code == 1
    said = " ".join(result.output.split())  # as one line, whatever the terminal's width
    assert "The source shop (mysql://" in said and "cannot be used: " in said
    assert "Access denied" in said and said.endswith("No task was run.")
    assert llm.requests == []
    assert not (tmp_path / "r" / "results.jsonl").exists()
    assert alice.get("/projects").json()["total"] == 0  # the project was tidied away

"""`workbench eval` end to end: the project's own task set through the real API, with the
scripted LLM playing each task's reference solution (or, as a second model, fumbling some).

One LLM serves both offered models and its replies see only the messages, not the model
asked for; so the second model is evaluated on its own invocation into the same report
folder, which is also how a user adds a model to an earlier evaluation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from tests.conftest import Api
from tests.support.eval_playbook import Playbook, read_jsonl
from tests.support.llm import HttpError, ScriptedLLM

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)

EVALS = Path(__file__).parents[2] / "evals"
TASKS = EVALS / "tasks.jsonl"
TABLES = EVALS / "tables"
REFERENCE, SECOND = "openai/scripted", "openai/gpt-4o-mini"
TASK_LIST = read_jsonl(TASKS)
PLAYBOOK = Playbook.of(TASK_LIST, EVALS / "solutions.jsonl")
# The second model answers these wrongly, and fails its first step on those (then recovers).
WRONG, ERROR_FIRST = PLAYBOOK.wrong, PLAYBOOK.error_first


def model_requests(llm: ScriptedLLM) -> list[str]:
    return [r["model"] for r in llm.requests]


def test_the_task_set_scores_its_reference_solutions_and_a_weaker_model(
    run_eval: Callable[..., Result],
    player: Callable[[Callable[..., str]], None],
    llm: ScriptedLLM,
    alice: Api,
    tmp_path: Path,
) -> None:
    report = tmp_path / "report"
    common = [str(TASKS), "--tables", str(TABLES), "--report", str(report), "--concurrency", "4"]
    player(PLAYBOOK.reference)

    # Part of the set, as if the evaluation had been stopped after ten tasks...
    first = run_eval(*common, "--model", REFERENCE, "--limit", "10")
    assert first.exit_code == 0, first.output
    assert len(read_jsonl(report / "results.jsonl")) == 10
    assert model_requests(llm) == ["scripted"] * 10
    # ...and cut off while writing the next result.
    with (report / "results.jsonl").open("a") as handle:
        handle.write('{"model": "openai/scripted", "task_id": "sales_')

    llm.requests.clear()
    rest = run_eval(*common, "--model", REFERENCE)
    assert rest.exit_code == 0, rest.output
    assert "Resuming" in rest.output and "10 runs done" in rest.output
    assert "unreadable" in rest.output
    assert model_requests(llm) == ["scripted"] * (len(TASK_LIST) - 10)

    built = json.loads((report / "report.json").read_text())
    (summary,) = built["models"]
    assert summary["model"] == REFERENCE
    assert summary["runs"] == len(TASK_LIST) >= 30
    assert summary["accuracy"] == 1.0 and summary["first_try_accuracy"] == 1.0
    assert summary["mean_steps"] == 1.0
    assert summary["tokens_in"] > 0 and summary["tokens_out"] > 0
    assert summary["cost_usd"] is None  # LiteLLM has no price for "scripted"
    assert all(len(t["results"][REFERENCE]) == 1 for t in built["tasks"])

    # The second model joins the same report; the first one's runs are not repeated.
    llm.requests.clear()
    player(PLAYBOOK.fumbling)
    both = run_eval(*common, "--model", REFERENCE, "--model", SECOND)
    assert both.exit_code == 0, both.output
    assert set(model_requests(llm)) == {"gpt-4o-mini"}
    assert len(llm.requests) == len(TASK_LIST) + len(ERROR_FIRST)

    built = json.loads((report / "report.json").read_text())
    assert [s["model"] for s in built["models"]] == [REFERENCE, SECOND]
    reference_summary, second = built["models"]
    assert reference_summary["accuracy"] == 1.0
    n = len(TASK_LIST)
    assert second["runs"] == n
    assert second["correct"] == n - len(WRONG)
    assert second["first_try_correct"] == n - len(WRONG) - len(ERROR_FIRST)
    assert second["accuracy"] == round((n - len(WRONG)) / n, 4)
    assert second["first_try_accuracy"] == round((n - len(WRONG) - len(ERROR_FIRST)) / n, 4)
    assert second["mean_steps"] == round((n + len(ERROR_FIRST)) / n, 2)
    assert second["failed_runs"] == 0
    assert second["cost_usd"] is not None and second["cost_usd"] > 0  # a priced model
    by_id = {t["id"]: t for t in built["tasks"]}
    wrong = by_id[sorted(WRONG)[0]]["results"][SECOND][0]
    assert not wrong["correct"] and set(wrong["given"].values()) == {"wrong"}
    recovered = by_id[sorted(ERROR_FIRST)[0]]["results"][SECOND][0]
    assert recovered["correct"] and not recovered["first_try"]
    assert recovered["steps"] == 2 and recovered["step_errors"] == 1

    page = (report / "report.md").read_text()
    accuracy = f"{(n - len(WRONG)) / n:.1%} ({n - len(WRONG)})"
    first_try = f"{(n - len(WRONG) - len(ERROR_FIRST)) / n:.1%}"
    assert f"| {REFERENCE} | {n} | 100.0% ({n}) | 100.0% ({n}) | 1.00 |" in page
    assert f"| {SECOND} | {n} | {accuracy} | {first_try} (" in page
    assert f"| {REFERENCE} | {n} | 100.0% ({n}) |" in page
    expected = " ".join(f"@{k}[{v}]" for k, v in TASK_LIST[0]["answers"])
    assert f"| {TASK_LIST[0]['id']} | `{expected}` | ✓ | ✗ @" in page
    # The terminal shows the same two tables.
    assert "Models" in both.output and "Tasks" in both.output
    assert "Report:" in both.output

    # Sessions and the project were deleted after use.
    assert alice.get("/projects").json()["total"] == 0


def test_a_failed_run_counts_as_wrong_with_its_error(
    run_eval: Callable[..., Result],
    player: Callable[[Callable[..., str]], None],
    llm: ScriptedLLM,
    tmp_path: Path,
) -> None:
    tasks = tmp_path / "one.jsonl"
    tasks.write_text(TASKS.read_text().splitlines()[0] + "\n")
    player(PLAYBOOK.reference)
    llm.script(HttpError(500, "The provider is down."))

    result = run_eval(
        str(tasks), "--tables", str(TABLES), "--report", str(tmp_path / "r"), "--json"
    )

    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    (summary,) = built["models"]
    assert summary["model"] == REFERENCE  # the server's default
    assert summary["failed_runs"] == 1 and summary["accuracy"] == 0.0
    (run,) = built["tasks"][0]["results"][REFERENCE]
    assert run["status"] == "failed" and run["error"]
    assert "## Errors" in (tmp_path / "r" / "report.md").read_text()


def test_a_model_the_server_does_not_offer_is_refused(
    run_eval: Callable[..., Result], tmp_path: Path
) -> None:
    result = run_eval(
        str(TASKS), "--tables", str(TABLES), "--report", str(tmp_path), "--model", "openai/nope"
    )

    assert result.exit_code == 2
    assert "openai/nope" in result.output and REFERENCE in result.output

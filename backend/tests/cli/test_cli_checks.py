"""`workbench checks` as a team runs it: add checks, run them on the server with --wait
(progress, then the report in `workbench eval`'s format), show a check run again with
--out (report.json of the eval report's shape), and the history of runs."""

from __future__ import annotations

import json

import pytest

from app.cli.eval_report import markdown
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_checks_run_with_wait_prints_the_report_and_show_writes_evals_files(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    alice.project("Shop")
    added = cli.run("checks", "add", "Shop", "-q", "What is 6 times 7?", "--expect", "total=42")
    assert added.code == 0, added.stderr
    second = cli.run(
        "checks", "add", "Shop", "-q", "Mean and max?", "-e", "mean=7.5", "-e", "max=9",
        "--format", "@mean[x] @max[y]",
    )  # fmt: skip
    assert second.code == 0, second.stderr
    listed = cli.run("checks", "list", "Shop")
    assert "What is 6 times 7?" in listed.stdout and "@mean[7.5] @max[9]" in listed.stdout
    bad = cli.run("checks", "add", "Shop", "-q", "Q", "--expect", "no-equals-sign")
    assert bad.code == 2 and "name=value" in bad.stderr
    no_wait = cli.run("checks", "run", "Shop", "--out", "report")
    assert no_wait.code == 2 and "--wait" in no_wait.stderr

    llm.script(final_reply("'It is @total[42]'"), final_reply("'@mean[7.5] @max[10]'"))
    ran = cli.run("checks", "run", "Shop", "--wait")
    assert ran.code == 0, ran.stderr
    assert "2/2 checks: 1 passed, 1 failed, 0 errors" in ran.stderr
    # The eval report's tables: the tasks (✓, and what was answered when wrong), the model.
    assert "@mean[7.5] @max[10]" in ran.stdout and "✓" in ran.stdout
    assert "openai/scripted" in ran.stdout and "50.0% (1)" in ran.stdout
    assert "succeeded: 1 of 2 passed (50.0%)." in ran.stdout

    check_run_id = alice.get(
        f"/projects/{alice.get('/projects').json()['items'][0]['id']}/check-runs"
    ).json()["items"][0]["id"]
    shown = cli.run("checks", "show", check_run_id, "--out", "report")
    assert shown.code == 0, shown.stderr
    report = json.loads((cli.home / "report" / "report.json").read_text())
    assert set(report) >= {"match", "task_count", "repeat", "models", "tasks", "written_at"}
    assert (report["task_count"], report["repeat"], report["match"]) == (2, 1, "rounded")
    [model] = report["models"]
    assert (model["model"], model["runs"], model["correct"], model["accuracy"]) == (
        "openai/scripted", 2, 1, 0.5,
    )  # fmt: skip
    assert model["tokens_in"] > 0 and model["mean_steps"] == 1.0
    first, second_task = report["tasks"]
    assert first["expected"] == {"total": "42"}
    [result] = second_task["results"]["openai/scripted"]
    assert result["given"] == {"mean": "7.5", "max": "10"} and not result["correct"]
    assert result["correctness"] == {"mean": True, "max": False} and result["run_id"]
    written = (cli.home / "report" / "report.md").read_text()
    assert written == markdown(report) and written.startswith("# Evaluation report")

    llm.script(final_reply("'@total[42]'"), final_reply("'@mean[7.5] @max[9]'"))
    assert cli.run("checks", "run", "Shop", "--wait").code == 0
    history = cli.run("checks", "history", "Shop")
    assert history.code == 0, history.stderr
    rows = [line for line in history.stdout.splitlines() if "succeeded" in line]
    assert len(rows) == 2 and "100.0% (2/2)" in rows[0] and "50.0% (1/2)" in rows[1]

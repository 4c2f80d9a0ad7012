"""`workbench eval --attempts 3` and `workbench checks run --attempts 3` (issue 44, point
6): per task and in total, the first attempt's accuracy, the voted accuracy, how often the
attempts agreed, the accuracy when they agreed and when they split, tokens, cost, time.

The scripted model answers each attempt by its task and strategy: one task where all three
agree and are right, one where the first attempt is wrong and the two others outvote it,
one where all three agree on a wrong answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from app.attempts.dissent import DISSENT_MARKER
from app.attempts.strategies import MARKER
from app.cli.eval_attempts import COLUMNS
from tests.api.attempts_script import FIRST, SECOND, THIRD
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)

MODEL = "openai/scripted"
# question → (expected, each strategy's answer)
TASKS = {
    "How many apples?": ("5", {FIRST: "5", SECOND: "5", THIRD: "5.0"}),
    "How many pears?": ("7", {FIRST: "4", SECOND: "7", THIRD: "7"}),
    "How many plums?": ("2", {FIRST: "1", SECOND: "1", THIRD: "1"}),
}


def _text(messages: list[dict[str, Any]]) -> str:
    def part(content: Any) -> str:
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content or "")

    return "\n".join(part(m.get("content")) for m in messages)


def answering(name: str) -> Callable[[list[dict[str, Any]]], str]:
    """Each attempt answers its task at once, as @name[value]."""

    def reply(messages: list[dict[str, Any]]) -> str:
        text = _text(messages)
        if DISSENT_MARKER in text:
            return ""
        strategy = re.search(re.escape(MARKER) + r" ([\w-]+)\.", text)
        assert strategy, "a request of no attempt"
        # The last question asked (a check run asks them all in one session).
        question = max((q for q in TASKS if q in text), key=text.rindex)
        value = TASKS[question][1][strategy.group(1)]
        return final_reply(f"'It is @{name}[{value}]'")

    return reply


EXPECTED_TOTAL = {
    "runs": 3,
    "first_attempt_correct": 1,
    "first_attempt_accuracy": 0.3333,
    "voted_correct": 2,
    "voted_accuracy": 0.6667,
    "agreed_runs": 2,
    "agreement_rate": 0.6667,
    "accuracy_when_agreed": 0.5,
    "accuracy_when_split": 1.0,
}


def test_eval_with_attempts_reports_agreement_against_correctness(
    run_eval: Callable[..., Result],
    player: Callable[[Callable[..., str]], None],
    tmp_path: Path,
) -> None:
    (tmp_path / "fruit.csv").write_text("fruit,count\napple,5\npear,7\nplum,2\n")
    lines = [
        json.dumps(
            {
                "id": f"t{i}",
                "question": question,
                "file_name": "fruit.csv",
                "format": "@count[value]",
                "answers": [["count", expected]],
            }
        )
        for i, (question, (expected, _)) in enumerate(TASKS.items(), 1)
    ]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(lines) + "\n")
    player(answering("count"))
    report = tmp_path / "report"

    result = run_eval(
        str(tasks), "--report", str(report), "--attempts", "3", "--concurrency", "3",
        env={"COLUMNS": "250"},
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    built = json.loads((report / "report.json").read_text())
    (summary,) = built["models"]
    figures = summary["attempts"]
    assert {k: figures[k] for k in EXPECTED_TOTAL} == EXPECTED_TOTAL
    assert figures["tokens_in"] == summary["tokens_in"] > 0 and figures["tokens_out"] > 0
    assert figures["cost_usd"] == summary["cost_usd"] and figures["wall_seconds"] >= 0
    runs = {t["id"]: t["results"][MODEL][0] for t in built["tasks"]}
    assert {
        k: (r["first_attempt_correct"], r["correct"], r["agreed"]) for k, r in runs.items()
    } == {
        "t1": (True, True, True),
        "t2": (False, True, False),
        "t3": (False, False, True),
    }
    assert (runs["t2"]["verdict"], runs["t2"]["agreement"], runs["t2"]["attempts"]) == (
        "majority",
        "2/3",
        3,
    )
    # The terminal and the markdown show the same table: a row a task, then the total.
    markdown = (report / "report.md").read_text()
    assert "## Attempts" in markdown and "| " + " | ".join(COLUMNS) + " |" in markdown
    section = markdown.split("## Attempts")[1].splitlines()
    total = next(line for line in section if line.startswith("| all |"))
    cells = [c.strip() for c in total.strip("|").split("|")]
    assert cells[:8] == ["all", MODEL, "3", "33.3%", "66.7%", "66.7%", "50.0%", "100.0%"]
    t2 = next(line for line in section if line.startswith("| t2 |"))
    assert [c.strip() for c in t2.strip("|").split("|")][2:8] == [
        "1", "0.0%", "100.0%", "0.0%", "—", "100.0%",
    ]  # fmt: skip
    assert "Attempts" in result.stdout and "Right when split" in result.stdout


def test_the_project_checks_take_the_same_option(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    alice.project("Fruit")
    for question, (expected, _) in TASKS.items():
        added = cli.run("checks", "add", "Fruit", "-q", question, "--expect", f"n={expected}")
        assert added.code == 0, added.stderr
    llm.responder = answering("n")

    ran = cli.run("checks", "run", "Fruit", "--attempts", "3", "--wait", "--json")

    assert ran.code == 0, ran.stderr
    report = json.loads(ran.stdout)
    [summary] = report["models"]
    assert {k: summary["attempts"][k] for k in EXPECTED_TOTAL} == EXPECTED_TOTAL

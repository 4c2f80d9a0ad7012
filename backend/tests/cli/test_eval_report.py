"""The results file an evaluation resumes from, and the report built from it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.cli.eval_dabench import Match, Task
from app.cli.eval_report import (
    RunRecord,
    append_record,
    build_report,
    markdown,
    read_records,
    task_cell,
)

TASKS = [
    Task(id="1", raw_id=1, question="Mean?", answers=(("mean", "2.50"),)),
    Task(id="2", raw_id=2, question="Which?", answers=(("name", "a|b"), ("count", "3"))),
]
RUN = RunRecord(
    model="m",
    task_id="1",
    repeat=1,
    status="succeeded",
    final_answer="@mean[2.50]",
    error=None,
    steps=1,
    step_errors=0,
    tokens_in=100,
    tokens_out=10,
    cost_usd=None,
    wall_seconds=2.0,
)


def report(records: list[RunRecord], models: list[str], repeat: int = 1) -> dict[str, Any]:
    return build_report(TASKS, records, models=models, repeat=repeat, match=Match.dabench, meta={})


def test_records_survive_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    append_record(path, RUN)
    with path.open("a") as handle:
        handle.write('{"model": "m", "task_')  # the process died mid-write
    append_record(path, replace(RUN, task_id="2"))

    records, unreadable = read_records(path)

    assert [r.task_id for r in records] == ["1", "2"]
    assert unreadable == 1
    assert read_records(tmp_path / "none.jsonl") == ([], 0)


def test_the_summary_counts_first_tries_steps_tokens_and_unknown_costs() -> None:
    records = [
        RUN,
        replace(RUN, task_id="2", final_answer="@name[a|b] @count[3]", steps=3, step_errors=1),
        replace(RUN, model="n", cost_usd=0.25, final_answer="@mean[2.5]", wall_seconds=4.0),
        replace(
            RUN,
            model="n",
            task_id="2",
            status="failed",
            final_answer=None,
            error="The provider is down.",
            cost_usd=None,
        ),
    ]

    built = report(records, ["n", "m"])
    n, m = built["models"]

    assert m["model"] == "m" and n["model"] == "n"
    assert (m["correct"], m["first_try_correct"], m["accuracy"], m["first_try_accuracy"]) == (
        2,
        1,
        1.0,
        0.5,
    )
    assert m["mean_steps"] == 2.0 and m["tokens_in"] == 200 and m["tokens_out"] == 20
    assert m["cost_usd"] is None  # unpriced: unknown, not zero
    assert n["cost_usd"] == 0.25 and n["failed_runs"] == 1 and n["accuracy"] == 0.5
    assert n["sub_answer_accuracy"] == round(1 / 3, 4)
    assert n["wall_seconds"] == 6.0 and n["mean_wall_seconds"] == 3.0

    page = markdown(built)
    assert "| n | 2 | 50.0% (1) | 50.0% (1) | 1.00 | 200 | 20 | $0.2500 | 6.0s |" in page
    assert "| m | 2 | 100.0% (2) | 50.0% (1) | 2.00 | 200 | 20 | — | 4.0s |" in page
    assert "| 2 | `@name[a\\|b] @count[3]` | ✗ failed: The provider is down. | ✓ |" in page
    assert "- 2, n, run 1: The provider is down." in page


def test_runs_not_made_yet_and_of_other_tasks_are_told_apart() -> None:
    records = [RUN, replace(RUN, task_id="gone")]

    built = report(records, ["m", "new"], repeat=2)
    m, new = built["models"]

    assert m["runs"] == 1 and m["missing_runs"] == 3
    assert new["runs"] == 0 and new["accuracy"] is None and new["cost_usd"] is None
    assert "| new | 0 (4 not run) | — | — | — |" in markdown(built)
    json.dumps(built)


def test_a_task_cell_shows_repeats_and_distinct_wrong_answers() -> None:
    right = {"correct": True, "status": "succeeded", "given": {"a": "1"}, "error": None}
    wrong = {"correct": False, "status": "succeeded", "given": {"a": "2"}, "error": None}
    blank = {"correct": False, "status": "succeeded", "given": {"a": None}, "error": None}

    assert task_cell([right, right]) == "✓"
    assert task_cell([right, wrong, wrong]) == "1/3 @a[2]"
    assert task_cell([wrong, blank]) == "✗ @a[2] / no @answers"
    assert task_cell([]) == "·"

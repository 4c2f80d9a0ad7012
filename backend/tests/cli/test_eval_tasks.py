"""The project's own task set (backend/evals): what is committed is what the generator writes,
and it is a fair DABench-style set."""

from __future__ import annotations

import json
from pathlib import Path

from app.cli.eval_dabench import load_tasks
from evals.generate import generate

EVALS = Path(__file__).parents[2] / "evals"


def test_the_committed_task_set_is_what_the_generator_writes(tmp_path: Path) -> None:
    written = generate(tmp_path)

    assert {p.relative_to(tmp_path).as_posix() for p in written} == {
        "tables/sales.csv",
        "tables/employees.csv",
        "tables/weather.csv",
        "tasks.jsonl",
        "solutions.jsonl",
    }
    for path in written:
        committed = EVALS / path.relative_to(tmp_path)
        assert committed.read_bytes() == path.read_bytes(), (
            f"{committed} is stale: run `uv run python -m evals.generate` in backend/"
        )


def test_the_task_set_is_dabench_shaped_and_varied() -> None:
    tasks = load_tasks(EVALS / "tasks.jsonl")
    rows = [json.loads(line) for line in (EVALS / "tasks.jsonl").read_text().splitlines()]
    solutions = {
        row["id"]: row["solution"]
        for row in map(json.loads, (EVALS / "solutions.jsonl").read_text().splitlines())
    }

    assert len(tasks) >= 30
    for row in rows:
        assert set(row) >= {"id", "question", "constraints", "format", "file_name", "answers"}
        assert (EVALS / "tables" / row["file_name"]).is_file()
        for name, _ in row["answers"]:
            assert f"@{name}[" in row["format"]
        assert row["id"] in solutions and "final_answer(" in solutions[row["id"]]
    # A question is never part of another (the test model finds tasks by their question).
    questions = [t.question for t in tasks]
    assert not [a for a in questions for b in questions if a != b and a in b]

    values = [v for t in tasks for _, v in t.answers]
    assert len({t.files for t in tasks}) >= 3
    assert sum(len(t.answers) > 1 for t in tasks) >= 5  # several answers at once
    assert any(not v.replace(".", "").replace("-", "").isdigit() for v in values)  # text
    assert any(v.isdigit() for v in values) and any("." in v for v in values)
    assert any("date" in s for s in solutions.values())

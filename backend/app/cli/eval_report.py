"""What an evaluation found: the record of each run, the report built from them, and the
report as JSON, markdown and terminal tables.

Runs are recorded raw (the final answer, not whether it was right), so a report is always
scored afresh against the current labels and matching rule.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from app.cli import eval_attempts
from app.cli.eval_dabench import Match, Task, score
from app.cli.eval_format import duration, money, percent

RESULTS = "results.jsonl"


@dataclass(frozen=True)
class RunRecord:
    """One run of one task by one model: a line of results.jsonl."""

    model: str
    task_id: str
    repeat: int
    status: str
    final_answer: str | None
    error: str | None
    steps: int
    step_errors: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    wall_seconds: float
    run_id: str | None = None
    session_id: str | None = None
    finished_at: str | None = None
    # Asked with several attempts: each one's {attempt, status, answer}, and the verdict's
    # {outcome, agreement, chosen} (app.cli.eval_attempts).
    attempts: list[dict[str, Any]] | None = None
    verdict: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.model, self.task_id, self.repeat)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values["task_id"] = str(values["task_id"])
        return cls(**values)


def read_records(path: Path) -> tuple[list[RunRecord], int]:
    """The runs recorded in results.jsonl (the last of a repeated key wins) and how many
    lines could not be read (e.g. the last one, cut short by an interruption)."""
    if not path.exists():
        return [], 0
    records: dict[tuple[str, str, int], RunRecord] = {}
    unreadable = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = RunRecord.from_dict(json.loads(line))
        except (ValueError, TypeError, KeyError):
            unreadable += 1
            continue
        records[record.key] = record
    return list(records.values()), unreadable


def append_record(path: Path, record: RunRecord) -> None:
    """Add a run to results.jsonl at once, on a line of its own even after a torn one."""
    with path.open("a+b") as handle:
        handle.seek(0, 2)
        if handle.tell():
            handle.seek(-1, 2)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write(record.to_json().encode() + b"\n")
        handle.flush()


# -- the report ------------------------------------------------------------------------------


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _run_entry(task: Task, record: RunRecord, match: Match) -> dict[str, Any]:
    result = score(task, record.final_answer, match)
    correct = record.status == "succeeded" and result.correct
    return {
        "repeat": record.repeat,
        "status": record.status,
        "correct": correct,
        "first_try": correct and record.step_errors == 0,
        "given": result.given,
        "correctness": result.correctness,
        "final_answer": record.final_answer,
        "error": record.error,
        "steps": record.steps,
        "step_errors": record.step_errors,
        "tokens_in": record.tokens_in,
        "tokens_out": record.tokens_out,
        "cost_usd": record.cost_usd,
        "wall_seconds": record.wall_seconds,
        "run_id": record.run_id,
        **eval_attempts.run_fields(task, record.attempts, record.verdict, match),
    }


def _summary(model: str, entries: list[dict[str, Any]], expected_runs: int) -> dict[str, Any]:
    runs = len(entries)
    correct = sum(e["correct"] for e in entries)
    first_try = sum(e["first_try"] for e in entries)
    labels = sum(len(e["correctness"]) for e in entries)
    right_labels = sum(sum(e["correctness"].values()) for e in entries)
    costs = [e["cost_usd"] for e in entries if e["cost_usd"] is not None]
    wall = sum(e["wall_seconds"] for e in entries)
    return {
        "model": model,
        "runs": runs,
        "missing_runs": max(0, expected_runs - runs),
        "correct": correct,
        "first_try_correct": first_try,
        "failed_runs": sum(e["status"] != "succeeded" for e in entries),
        "accuracy": _ratio(correct, runs),
        "first_try_accuracy": _ratio(first_try, runs),
        # DABench's second figure: each sub-answer counted on its own.
        "sub_answer_accuracy": _ratio(right_labels, labels),
        "mean_steps": round(statistics.fmean(e["steps"] for e in entries), 2) if runs else None,
        "tokens_in": sum(e["tokens_in"] for e in entries),
        "tokens_out": sum(e["tokens_out"] for e in entries),
        # Unpriced models have no cost: null, never a pretended zero.
        "cost_usd": round(sum(costs), 6) if costs else None,
        "wall_seconds": round(wall, 2),
        "mean_wall_seconds": round(wall / runs, 2) if runs else None,
        # With --attempts: first attempt against the vote, agreement as a signal.
        "attempts": eval_attempts.summary(entries),
    }


def build_report(
    tasks: list[Task],
    records: list[RunRecord],
    *,
    models: list[str],
    repeat: int,
    match: Match,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """The report of every recorded run of these tasks: `models` first, then any other
    model the results hold (a report folder can collect models evaluated on different days).
    """
    by_id = {task.id: task for task in tasks}
    mine = [r for r in records if r.task_id in by_id]
    order = list(dict.fromkeys([*models, *sorted({r.model for r in mine})]))
    entries: dict[str, dict[str, list[dict[str, Any]]]] = {m: {} for m in order}
    for record in sorted(mine, key=lambda r: r.repeat):
        cell = entries[record.model].setdefault(record.task_id, [])
        cell.append(_run_entry(by_id[record.task_id], record, match))
    summaries = [
        _summary(
            model,
            [e for cell in entries[model].values() for e in cell],
            len(tasks) * repeat,
        )
        for model in order
    ]
    return {
        **meta,
        "match": match.value,
        "task_count": len(tasks),
        "repeat": repeat,
        "models": summaries,
        "tasks": [
            {
                "id": task.raw_id if task.raw_id is not None else task.id,
                "question": task.question,
                "expected": task.expected,
                "results": {m: entries[m].get(task.id, []) for m in order},
            }
            for task in tasks
        ],
    }


# -- presenting it ---------------------------------------------------------------------------


def _steps(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _share(ratio: float | None, count: int) -> str:
    return "—" if ratio is None else f"{percent(ratio)} ({count})"


SUMMARY_COLUMNS = (
    "Model",
    "Runs",
    "Accuracy",
    "First-try accuracy",
    "Mean steps",
    "Tokens in",
    "Tokens out",
    "Cost",
    "Wall time",
)


def summary_row(summary: dict[str, Any]) -> list[str]:
    runs = str(summary["runs"])
    if summary["missing_runs"]:
        runs += f" ({summary['missing_runs']} not run)"
    return [
        summary["model"],
        runs,
        _share(summary["accuracy"], summary["correct"]),
        _share(summary["first_try_accuracy"], summary["first_try_correct"]),
        _steps(summary["mean_steps"]),
        f"{summary['tokens_in']:,}",
        f"{summary['tokens_out']:,}",
        money(summary["cost_usd"]),
        duration(summary["wall_seconds"]),
    ]


def answers_text(answers: dict[str, str | None]) -> str:
    return " ".join(
        f"@{name}[{'—' if value is None else value}]" for name, value in answers.items()
    )


def task_cell(results: list[dict[str, Any]]) -> str:
    """✓ or ✗ (or 2/3 over repeats) and what was answered, when it was not right."""
    if not results:
        return "·"
    right = sum(r["correct"] for r in results)
    mark = "✓" if right == len(results) else "✗" if right == 0 else f"{right}/{len(results)}"
    if right == len(results):
        return mark
    seen: list[str] = []
    for result in results:
        if result["correct"]:
            continue
        if result["status"] != "succeeded":
            text = f"{result['status']}: {(result['error'] or '').splitlines()[0][:80]}".rstrip()
        elif any(v is not None for v in result["given"].values()):
            text = answers_text(result["given"])
        else:
            text = "no @answers"
        if text not in seen:
            seen.append(text)
    return f"{mark} {' / '.join(seen)}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: dict[str, Any]) -> str:
    """The report as a markdown page: the summary, then one row a task."""
    models = [s["model"] for s in report["models"]]
    lines = [
        "# Evaluation report",
        "",
        f"Tasks: `{report.get('tasks_file', '')}` ({report['task_count']} tasks, "
        f"{report['repeat']} run{'s' if report['repeat'] != 1 else ''} each), "
        f"answers matched by the `{report['match']}` rule; written {report.get('written_at', '')}.",
        "",
        "## Summary",
        "",
        "| " + " | ".join(SUMMARY_COLUMNS) + " |",
        "|" + "---|" * len(SUMMARY_COLUMNS),
    ]
    for summary in report["models"]:
        lines.append("| " + " | ".join(_md(c) for c in summary_row(summary)) + " |")
    lines += [
        "",
        "First-try accuracy counts the runs that were right with no failed step; wall time "
        "adds up each run's time from its start to its end (report.json has the mean).",
        "",
        "## Tasks",
        "",
        "| Task | Expected | " + " | ".join(_md(m) for m in models) + " |",
        "|---|---|" + "---|" * len(models),
    ]
    for task in report["tasks"]:
        cells = [str(task["id"]), f"`{answers_text(task['expected'])}`"]
        cells += [task_cell(task["results"][m]) for m in models]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    lines += eval_attempts.markdown(report)
    failures = [
        (task["id"], model, r)
        for task in report["tasks"]
        for model in models
        for r in task["results"][model]
        if r["error"]
    ]
    if failures:
        lines += ["", "## Errors", ""]
        for task_id, model, r in failures:
            lines.append(f"- {task_id}, {model}, run {r['repeat']}: {_md(r['error'])}")
    return "\n".join(lines) + "\n"


def summary_table(report: dict[str, Any]) -> Table:
    table = Table(title="Models")
    for name in SUMMARY_COLUMNS:
        table.add_column(name, justify="left" if name == "Model" else "right")
    for summary in report["models"]:
        table.add_row(*(Text(c) for c in summary_row(summary)))
    return table


def tasks_table(report: dict[str, Any]) -> Table:
    models = [s["model"] for s in report["models"]]
    table = Table(title="Tasks")
    table.add_column("Task")
    table.add_column("Expected")
    for model in models:
        table.add_column(model)
    for task in report["tasks"]:
        cells = [task_cell(task["results"][m]) for m in models]
        table.add_row(
            Text(str(task["id"])), Text(answers_text(task["expected"])), *map(Text, cells)
        )
    return table


def write_report(folder: Path, report: dict[str, Any]) -> tuple[Path, Path]:
    """report.json and report.md in `folder`."""
    as_json, as_md = folder / "report.json", folder / "report.md"
    as_json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    as_md.write_text(markdown(report), encoding="utf-8")
    return as_json, as_md

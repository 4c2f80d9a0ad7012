"""What an evaluation with several attempts a question (`--attempts N`) adds to its report:
whether agreement between attempts is a signal a team can trust on their model.

For each run: whether its first attempt's answer was right, whether the voted answer (the
run's) was, and whether the attempts agreed (the verdict `agree`: every attempt gave the
same result). Per task and in total: the first attempt's accuracy, the voted accuracy, how
often the attempts agreed, the accuracy when they agreed against when they split, tokens,
cost and time. Runs asked with one attempt have none of this.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from app.cli.eval_dabench import Match, Task, score
from app.cli.eval_format import duration, money, percent


def recorded(run: dict[str, Any]) -> dict[str, Any]:
    """A run's attempts and verdict as its record keeps them (nothing for one attempt)."""
    attempts = run.get("attempts")
    if not attempts:
        return {}
    verdict = run.get("verdict") or {}
    return {
        "attempts": [
            {key: a.get(key) for key in ("attempt", "status", "answer")} for a in attempts
        ],
        "verdict": {key: verdict.get(key) for key in ("outcome", "agreement", "chosen")},
    }


def run_fields(
    task: Task,
    attempts: list[dict[str, Any]] | None,
    verdict: dict[str, Any] | None,
    match: Match,
) -> dict[str, Any]:
    """A run's attempts as the report keeps them (nothing for a single-attempt run)."""
    if not attempts:
        return {}
    first = next((a for a in attempts if a.get("attempt") == 1), attempts[0])
    right = first.get("status") == "succeeded" and score(task, first.get("answer"), match).correct
    return {
        "attempts": len(attempts),
        "first_attempt_correct": right,
        "agreed": bool(verdict) and (verdict or {}).get("outcome") == "agree",
        "verdict": (verdict or {}).get("outcome"),
        "agreement": (verdict or {}).get("agreement"),
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summary(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The attempts' figures of these runs (None when none was asked with attempts)."""
    counted = [e for e in entries if "attempts" in e]
    if not counted:
        return None
    agreed = [e for e in counted if e["agreed"]]
    split = [e for e in counted if not e["agreed"]]
    costs = [e["cost_usd"] for e in counted if e["cost_usd"] is not None]
    wall = sum(e["wall_seconds"] for e in counted)
    return {
        "runs": len(counted),
        "first_attempt_correct": sum(e["first_attempt_correct"] for e in counted),
        "first_attempt_accuracy": _ratio(
            sum(e["first_attempt_correct"] for e in counted), len(counted)
        ),
        "voted_correct": sum(e["correct"] for e in counted),
        "voted_accuracy": _ratio(sum(e["correct"] for e in counted), len(counted)),
        "agreed_runs": len(agreed),
        "agreement_rate": _ratio(len(agreed), len(counted)),
        "accuracy_when_agreed": _ratio(sum(e["correct"] for e in agreed), len(agreed)),
        "accuracy_when_split": _ratio(sum(e["correct"] for e in split), len(split)),
        "tokens_in": sum(e["tokens_in"] for e in counted),
        "tokens_out": sum(e["tokens_out"] for e in counted),
        "cost_usd": round(sum(costs), 6) if costs else None,
        "wall_seconds": round(wall, 2),
    }


COLUMNS = (
    "Task",
    "Model",
    "Runs",
    "First attempt",
    "Voted",
    "Agreed",
    "Right when agreed",
    "Right when split",
    "Tokens in",
    "Tokens out",
    "Cost",
    "Wall time",
)


def _row(task: str, model: str, figures: dict[str, Any]) -> list[str]:
    return [
        task,
        model,
        str(figures["runs"]),
        percent(figures["first_attempt_accuracy"]),
        percent(figures["voted_accuracy"]),
        percent(figures["agreement_rate"]),
        percent(figures["accuracy_when_agreed"]),
        percent(figures["accuracy_when_split"]),
        f"{figures['tokens_in']:,}",
        f"{figures['tokens_out']:,}",
        money(figures["cost_usd"]),
        duration(figures["wall_seconds"]),
    ]


def rows(report: dict[str, Any]) -> list[list[str]]:
    """One row a task and model, then one a model for all tasks ("all"); none when no run
    was asked with attempts."""
    found: list[list[str]] = []
    for task in report["tasks"]:
        for model, results in task["results"].items():
            figures = summary(results)
            if figures is not None:
                found.append(_row(str(task["id"]), model, figures))
    for model in report["models"]:
        if model.get("attempts") is not None:
            found.append(_row("all", model["model"], model["attempts"]))
    return found


def markdown(report: dict[str, Any]) -> list[str]:
    """The report's "Attempts" section (no lines without attempts)."""
    found = rows(report)
    if not found:
        return []
    lines = [
        "",
        "## Attempts",
        "",
        "Each question was asked with several attempts; the run's answer is their vote. "
        "Agreed: every attempt gave the same result. Is agreement a signal? Compare the "
        "accuracy when they agreed with the accuracy when they split.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in found]
    return lines


def table(report: dict[str, Any]) -> Table | None:
    found = rows(report)
    if not found:
        return None
    shown = Table(title="Attempts")
    for name in COLUMNS:
        shown.add_column(name, justify="left" if name in ("Task", "Model") else "right")
    for row in found:
        shown.add_row(*(Text(c) for c in row))
    return shown

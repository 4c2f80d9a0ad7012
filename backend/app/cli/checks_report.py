"""A check run as `workbench eval`'s report: each check a task, each result a recorded run,
built, scored and written by app.cli.eval_report (the same format, the same scoring)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.cli import eval_attempts
from app.cli.eval_dabench import Match, Task
from app.cli.eval_report import RunRecord, build_report

# As the server scores checks (app.checks.asking.MATCH), and `workbench eval` by default.
MATCH = Match.rounded


def task_of(result: dict[str, Any]) -> Task:
    key = str(result["position"])
    return Task(
        id=key,
        question=result["question"],
        answers=tuple((name, str(value)) for name, value in result["expected"].items()),
        raw_id=result.get("check_id") or key,
    )


def _wall(run: dict[str, Any]) -> float:
    try:
        start = datetime.fromisoformat(run["started_at"])
        end = datetime.fromisoformat(run["finished_at"])
    except (KeyError, TypeError, ValueError):
        return 0.0
    return round(max(0.0, (end - start).total_seconds()), 3)


def record_of(
    check_run: dict[str, Any], result: dict[str, Any], run: dict[str, Any] | None
) -> RunRecord | None:
    """The result as a recorded run (None while it is pending: not run yet)."""
    if result["status"] == "pending":
        return None
    run = run or {}
    steps = run.get("steps") or []
    asked = run.get("status") is not None
    status = run["status"] if asked else "failed"
    error = run.get("error") if asked else result.get("detail")
    if result["status"] == "error" and not error:
        error = result.get("detail")
    return RunRecord(
        model=check_run["model"],
        task_id=str(result["position"]),
        repeat=1,
        status=status,
        final_answer=result.get("answer"),
        error=error,
        steps=len(steps),
        step_errors=sum(1 for step in steps if step.get("error")),
        tokens_in=int(run.get("tokens_in") or 0),
        tokens_out=int(run.get("tokens_out") or 0),
        cost_usd=run.get("cost_usd"),
        wall_seconds=_wall(run),
        run_id=result.get("run_id"),
        session_id=check_run.get("session_id"),
        finished_at=run.get("finished_at"),
        **eval_attempts.recorded(run),
    )


def report_of(
    check_run: dict[str, Any], runs: dict[str, dict[str, Any]], project: str, server: str
) -> dict[str, Any]:
    """The eval report of a check run; `runs`: its results' runs by id (GET /runs/{id})."""
    results = check_run["results"]
    tasks = [task_of(r) for r in results]
    records = [
        record
        for r in results
        if (record := record_of(check_run, r, runs.get(str(r.get("run_id"))))) is not None
    ]
    meta = {
        "tasks_file": f"the checks of {project}",
        "labels_file": None,
        "sources": {},
        "server": server,
        "written_at": check_run.get("finished_at") or check_run.get("created_at"),
        "check_run": {
            key: check_run.get(key)
            for key in (
                "id",
                "project_id",
                "status",
                "error",
                "session_id",
                "total",
                "passed",
                "failed",
                "errors",
                "accuracy",
                "started_at",
                "finished_at",
            )
        },
    }
    return build_report(
        tasks, records, models=[check_run["model"]], repeat=1, match=MATCH, meta=meta
    )

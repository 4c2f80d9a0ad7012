"""`workbench checks`: a project's checks (questions with expected answers), run through
the server as real questions, reported as `workbench eval` reports."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli import eval_attempts, lookup
from app.cli.checks_report import report_of
from app.cli.client import WorkbenchClient
from app.cli.config import connect
from app.cli.eval_format import percent
from app.cli.eval_report import summary_table, tasks_table, write_report
from app.cli.output import Failure, cost, err, out, print_json, print_table, shorten, tokens, when

app = typer.Typer(help="A project's checks: questions with expected answers, run to measure.")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ProjectRef = Annotated[str, typer.Argument(help="Project id or name.")]
OutDir = Annotated[
    Path | None,
    typer.Option("--out", help="Write report.json and report.md (as `workbench eval`) here."),
]
# How often `run --wait` looks at the check run's progress.
POLL_SECONDS = 1.0
FINISHED = ("succeeded", "failed", "cancelled")


@app.command("list")
def list_checks(project: ProjectRef, as_json: AsJson = False) -> None:
    """List the project's checks."""
    with connect() as client:
        chosen = lookup.project(client, project)
        items = client.all_items(f"/projects/{chosen['id']}/checks")
    if as_json:
        print_json(items)
        return
    if not items:
        out.print(f"No checks in {chosen['name']} yet: `workbench checks add` adds one.")
        return
    rows = [
        (c["id"], shorten(c["question"]), " ".join(f"@{k}[{v}]" for k, v in c["expected"].items()))
        for c in items
    ]
    print_table(("ID", "QUESTION", "EXPECTED"), rows, wrap=("QUESTION", "EXPECTED"))


def _pairs(expect: list[str]) -> dict[str, str]:
    pairs = {}
    for item in expect:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise Failure(f"--expect {item!r}: write it as name=value (e.g. total=42).", 2)
        pairs[name.strip()] = value.strip()
    return pairs


@app.command()
def add(
    project: ProjectRef,
    question: Annotated[str, typer.Option("--question", "-q", help="The question.")],
    expect: Annotated[
        list[str],
        typer.Option("--expect", "-e", help="name=value the answer must end with as @name[value]."),
    ],
    format: Annotated[
        str, typer.Option("--format", help="The answer format asked of the agent.")
    ] = "",
    as_json: AsJson = False,
) -> None:
    """Add a check to the project."""
    body = {"question": question, "expected": _pairs(expect), "format": format}
    with connect() as client:
        chosen = lookup.project(client, project)
        created = client.json("POST", f"/projects/{chosen['id']}/checks", json=body)
    if as_json:
        print_json(created)
    else:
        out.print(f"Added check {created['id']} to {chosen['name']}.")


@app.command()
def history(project: ProjectRef, as_json: AsJson = False) -> None:
    """The project's check runs, newest first."""
    with connect() as client:
        chosen = lookup.project(client, project)
        items = client.all_items(f"/projects/{chosen['id']}/check-runs")
    if as_json:
        print_json(items)
        return
    rows = [
        (
            c["id"],
            c["status"],
            c["model"],
            f"{percent(c['accuracy'])} ({c['passed']}/{c['total']})",
            tokens(c.get("tokens_in"), c.get("tokens_out")),
            cost(c.get("cost_usd")),
            when(c.get("started_at")),
        )
        for c in items
    ]
    print_table(("ID", "STATUS", "MODEL", "ACCURACY", "TOKENS", "COST", "STARTED"), rows)


@app.command()
def run(
    project: ProjectRef,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="One of `GET /models`.")
    ] = None,
    attempts: Annotated[int, typer.Option(min=1, max=5, help="Attempts per question.")] = 1,
    wait: Annotated[bool, typer.Option("--wait", help="Show progress, then the report.")] = False,
    out_dir: OutDir = None,
    as_json: AsJson = False,
) -> None:
    """Run every check of the project on the server (in the background)."""
    if out_dir is not None and not wait:
        raise Failure(
            "--out writes the report at the end: use it with --wait (or later with `show`).", 2
        )
    body: dict[str, Any] = {"attempts": attempts}
    if model:
        body["model"] = model
    with connect() as client:
        chosen = lookup.project(client, project)
        started = client.json("POST", f"/projects/{chosen['id']}/check-runs", json=body)
        if not wait:
            if as_json:
                print_json(started)
            else:
                out.print(
                    f"Running {started['total']} checks with {started['model']}: "
                    f"`workbench checks show {started['id']}` shows how it goes."
                )
            return
        done = _wait(client, started)
        _report(client, done, chosen["name"], out_dir, as_json)


def _wait(client: WorkbenchClient, check_run: dict[str, Any]) -> dict[str, Any]:
    """The check run once it ended, its progress on stderr as each check ends."""
    said = -1
    while True:
        check_run = client.json("GET", f"/check-runs/{check_run['id']}")
        asked = check_run["passed"] + check_run["failed"] + check_run["errors"]
        if asked != said:
            said = asked
            err.print(
                f"{asked}/{check_run['total']} checks: {check_run['passed']} passed, "
                f"{check_run['failed']} failed, {check_run['errors']} errors"
            )
        if check_run["status"] in FINISHED:
            return check_run
        time.sleep(POLL_SECONDS)


@app.command()
def show(
    check_run: Annotated[str, typer.Argument(help="The check run's id.")],
    out_dir: OutDir = None,
    as_json: AsJson = False,
) -> None:
    """A check run's report (as far as it has gone)."""
    with connect() as client:
        found = client.json("GET", f"/check-runs/{check_run}")
        project = client.project(found["project_id"])
        _report(client, found, project["name"], out_dir, as_json)


def _report(
    client: WorkbenchClient,
    check_run: dict[str, Any],
    project: str,
    out_dir: Path | None,
    as_json: bool,
) -> None:
    runs = {
        str(r["run_id"]): client.run(str(r["run_id"]))
        for r in check_run["results"]
        if r.get("run_id") and r["status"] != "pending"
    }
    report = report_of(check_run, runs, project, client.url)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        as_json_path, as_md_path = write_report(out_dir, report)
        err.print(f"Report: {as_md_path} and {as_json_path}.")
    if as_json:
        print_json(report)
        return
    out.print(tasks_table(report))
    out.print(summary_table(report))
    attempts_table = eval_attempts.table(report)
    if attempts_table is not None:
        out.print(attempts_table)
    status = check_run["status"]
    summary = (
        f"Check run {check_run['id']} {status}: {check_run['passed']} of {check_run['total']} "
        f"passed ({percent(check_run['accuracy'])})"
    )
    out.print(summary + (f". {check_run['error']}" if check_run.get("error") else "."))

"""`workbench jobs`: a session made into a job (a script that runs with no model, with its
checks), run on the server, its schedule, its history (with each run's change and alerts),
and its export."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli import job_repairs, lookup
from app.cli.config import connect
from app.cli.output import Failure, err, out, print_json, print_table, shorten

app = typer.Typer(help="Jobs: a session's code run again without the model, with its checks.")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
JobId = Annotated[str, typer.Argument(help="The job's id.")]
POLL_SECONDS = 1.0
ENDED = ("succeeded", "failed", "skipped")
app.command()(job_repairs.repairs)
app.command()(job_repairs.approve)


@app.command()
def create(
    session: Annotated[str, typer.Option("--session", help="The session (id or title).")],
    name: Annotated[str, typer.Option("--name", help="The job's name.")],
    runs: Annotated[
        list[str] | None, typer.Option("--runs", help="Only these runs of the session (ids).")
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait until its checks are written.")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Make a job of a session's runs (all that succeeded, or --runs)."""
    with connect() as client:
        chosen = lookup.session(client, session)
        body: dict[str, Any] = {"session_id": chosen["id"], "name": name}
        if runs:
            body["run_ids"] = lookup.runs(client, chosen["id"], runs, "--runs")
        job = client.json("POST", f"/projects/{chosen['project_id']}/jobs", json=body)
        while wait and job["checks"]["status"] == "writing":
            time.sleep(POLL_SECONDS)
            job = client.json("GET", f"/jobs/{job['id']}")
    if as_json:
        print_json(job)
        return
    params = ", ".join(f"{p['name']}={p['default']!r}" for p in job["params"]) or "none"
    out.print(f"Made the job {job['name']} ({job['id']}); parameters: {params}.")
    out.print(
        f"Checks: {job['checks']['status']}"
        + (f" ({job['checks']['note']})" if job["checks"].get("note") else "")
    )


@app.command("list")
def list_jobs(
    project: Annotated[str, typer.Argument(help="Project id or name.")], as_json: AsJson = False
) -> None:
    """List the project's jobs with their last run."""
    with connect() as client:
        chosen = lookup.project(client, project)
        items = client.all_items(f"/projects/{chosen['id']}/jobs")
    if as_json:
        print_json(items)
        return
    if not items:
        out.print(f"No jobs in {chosen['name']} yet: `workbench jobs create` makes one.")
        return
    rows = [
        (j["id"], j["name"], j["checks"]["status"], (j["last_run"] or {}).get("status") or "-")
        for j in items
    ]
    print_table(("ID", "NAME", "CHECKS", "LAST RUN"), rows)


def _params(given: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise Failure(f"--param {item!r}: write it as name=value.", 2)
        try:
            params[name.strip()] = json.loads(value)
        except ValueError:
            params[name.strip()] = value
    return params


@app.command()
def run(
    job: JobId,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="name=value for this run.")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the run to end.")] = False,
    as_json: AsJson = False,
) -> None:
    """Run the job now (on the server, with no model)."""
    body = {"params": _params(param or [])} if param else {}
    with connect() as client:
        job_run = client.json("POST", f"/jobs/{job}/runs", json=body)
        while wait and job_run["status"] not in ENDED:
            time.sleep(POLL_SECONDS)
            job_run = client.json("GET", f"/job-runs/{job_run['id']}")
    if as_json:
        print_json(job_run)
        return
    _show(job_run)
    if job_run["status"] == "failed":
        raise typer.Exit(1)


def _show(job_run: dict[str, Any]) -> None:
    status = job_run["status"]
    why = job_run.get("error") or job_run.get("skipped_reason")
    out.print(f"Job run {job_run['id']}: {status}" + (f": {why}" if why else ""))
    for check in job_run["checks"]:
        if not check["passed"]:
            err.print(f"  check {check['name']} failed: {check['message']}")
    for name, value in job_run["results"].items():
        if isinstance(value, dict) and "rows" in value:
            value = f"a table of {value.get('row_count')} rows"
        out.print(f"  {name}: {shorten(str(value))}")


@app.command()
def history(job: JobId, as_json: AsJson = False) -> None:
    """The job's runs, newest first."""
    with connect() as client:
        items = client.all_items(f"/jobs/{job}/runs")
    if as_json:
        print_json(items)
        return
    rows = [
        (
            r["id"],
            r["status"],
            r["trigger"],
            str(r["created_at"])[:19],
            _change(r.get("change") or {}),
            _deliveries(r.get("deliveries") or []),
            shorten(r.get("error") or r.get("skipped_reason") or ""),
        )
        for r in items
    ]
    header = ("ID", "STATUS", "TRIGGER", "STARTED", "CHANGE", "ALERTS", "WHY")
    print_table(header, rows, wrap=("CHANGE", "WHY"))


def _change(change: dict[str, Any]) -> str:
    """Each result that moved, as `name +3.2%` (or `name changed`)."""
    parts = []
    for name, moved in change.items():
        pct = moved.get("pct")
        if isinstance(pct, int | float) and pct:
            parts.append(f"{name} {pct:+.1f}%")
        elif moved.get("changed") and moved.get("before") is not None:
            parts.append(f"{name} changed")
    return ", ".join(parts)


def _deliveries(deliveries: list[dict[str, Any]]) -> str:
    return ", ".join(f"{d['channel']} {d['status']}" for d in deliveries)


def _show_schedule(job: dict[str, Any]) -> None:
    schedule = job.get("schedule")
    if schedule is None:
        out.print(f"Job {job['id']}: runs on demand only")
        return
    when = schedule.get("cron") or f"every {schedule.get('every_minutes')} min"
    state = "paused" if job.get("paused") else f"next run {job.get('next_run_at')}"
    out.print(f"Job {job['id']}: {when} ({schedule['timezone']}), {state}")


@app.command()
def schedule(
    job: JobId,
    cron: Annotated[
        str | None, typer.Option("--cron", help="A cron line, e.g. '0 8 * * 1'.")
    ] = None,
    every: Annotated[int | None, typer.Option("--every", help="Every N minutes.")] = None,
    tz: Annotated[str, typer.Option("--tz", help="The time zone of the cron line.")] = "UTC",
    off: Annotated[bool, typer.Option("--off", help="Remove the schedule.")] = False,
) -> None:
    """Run the job by itself, on a cron line or every N minutes (--off: on demand only)."""
    if off:
        body: dict[str, Any] = {"schedule": None}
    elif (cron is None) == (every is None):
        raise Failure("Give --cron or --every (or --off).")
    else:
        given = {"cron": cron} if cron is not None else {"every_minutes": every}
        body = {"schedule": {**given, "timezone": tz}}
    with connect() as client:
        _show_schedule(client.json("PATCH", f"/jobs/{job}", json=body))


@app.command()
def pause(job: JobId) -> None:
    """Stop the job's schedule from firing (until `resume`)."""
    with connect() as client:
        _show_schedule(client.json("PATCH", f"/jobs/{job}", json={"paused": True}))


@app.command()
def resume(job: JobId) -> None:
    """Let the job's schedule fire again, from its next tick."""
    with connect() as client:
        _show_schedule(client.json("PATCH", f"/jobs/{job}", json={"paused": False}))


@app.command()
def export(
    job: JobId,
    format: Annotated[str, typer.Option("--format", help="py (a zip) or ipynb.")] = "py",
    to: Annotated[Path | None, typer.Option("--out", help="Where to write it.")] = None,
) -> None:
    """Download the job: job.py and test_job.py (a zip), or a notebook."""
    if format not in ("py", "ipynb"):
        raise Failure("--format is py or ipynb.", 2)
    with connect() as client:
        response = client.request("GET", f"/jobs/{job}/export", params={"format": format})
    disposition = response.headers.get("content-disposition", "")
    name = (
        disposition.split('filename="', 1)[-1].rstrip('"')
        if 'filename="' in disposition
        else (f"job.{'zip' if format == 'py' else 'ipynb'}")
    )
    target = to or Path(name)
    target.write_bytes(response.content)
    out.print(f"Wrote {target}.")

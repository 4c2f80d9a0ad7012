"""What a job's share link shows (app.shares.job_links): the job's latest run that ran (not a
skipped one) — its values, their change since the run before, its checks and its charts — as
a standalone HTML page (charts as PNG images drawn by app.jobs.chart_image; no script) or as
JSON (`?format=json`: the same, the charts as their Plotly figures)."""

from __future__ import annotations

import html
import json
import uuid
from base64 import b64encode
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.infra.storage import ObjectNotFound, ObjectStorage
from app.jobs.chart_image import MAX_FIGURE_BYTES, chart_png
from app.models import Artifact
from app.models.jobs import Job, JobRun, JobRunStatus

# The policy of the page (served with app.api.headers.shared_report_headers): no script,
# nothing fetched; its images are inline.
PAGE_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
MAX_CHARTS = 4


@dataclass
class JobView:
    job: Job
    run: JobRun | None
    checked_at: str | None = None  # the latest run, when it was skipped (nothing new)
    charts: list[tuple[str, bytes]] = field(default_factory=list)  # (name, Plotly JSON)


async def gather(db: AsyncSession, storage: ObjectStorage, job_id: uuid.UUID) -> JobView | None:
    """The job and its latest run that ran, with its charts' figures (None: no such job)."""
    job = await db.get(Job, job_id)
    if job is None:
        return None
    latest = await db.scalar(
        select(JobRun)
        .where(JobRun.job_id == job.id, JobRun.finished_at.is_not(None))
        .order_by(JobRun.created_at.desc())
        .limit(1)
    )
    run = await db.scalar(
        select(JobRun)
        .where(
            JobRun.job_id == job.id,
            JobRun.status.in_((JobRunStatus.succeeded, JobRunStatus.failed)),
        )
        .order_by(JobRun.created_at.desc())
        .limit(1)
    )
    view = JobView(job, run)
    if latest is not None and latest.status == JobRunStatus.skipped and latest.finished_at:
        view.checked_at = latest.finished_at.isoformat()
    if run is not None and run.run_id is not None and run.status == JobRunStatus.succeeded:
        found = await db.scalars(
            select(Artifact)
            .where(Artifact.run_id == run.run_id, Artifact.kind == "plotly")
            .order_by(Artifact.created_at, Artifact.name)
            .limit(MAX_CHARTS)
        )
        for artifact in found:
            data = await read_object(storage, artifact.storage_key, MAX_FIGURE_BYTES)
            if data is not None:
                view.charts.append((artifact.name, data))
    return view


async def read_object(storage: ObjectStorage, key: str, limit: int) -> bytes | None:
    """An object's bytes, None when it is missing or over `limit`."""
    chunks, size = [], 0
    try:
        async for chunk in storage.iter_bytes(key):
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
    except ObjectNotFound:
        return None
    return b"".join(chunks)


def _run_json(run: JobRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "status": run.status,
        "error": run.error,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "results": run.results or {},
        "change": run.change or {},
        "checks": run.checks or [],
    }


def as_json(view: JobView) -> dict[str, Any]:
    charts = []
    for name, data in view.charts:
        try:
            charts.append({"name": name, "figure": json.loads(data)})
        except ValueError:
            continue
    return {
        "job": {"name": view.job.name},
        "latest_run": _run_json(view.run),
        "checked_at": view.checked_at,
        "charts": charts,
    }


def _cell(value: object) -> str:
    if isinstance(value, float):
        return html.escape(f"{value:,.2f}")
    if isinstance(value, int) and not isinstance(value, bool):
        return html.escape(f"{value:,}")
    return html.escape(str(value) if value is not None else "")


def _table(value: dict[str, Any]) -> str:
    head = "".join(f"<th>{_cell(c)}</th>" for c in value.get("columns", []))
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
        for row in value.get("rows", [])
    )
    count = value.get("row_count")
    more = ""
    if isinstance(count, int) and count > len(value.get("rows", [])):
        more = f"<p class=note>The first {len(value['rows'])} of {count:,} rows.</p>"
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _change(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("before") is None:
        return ""
    text = f"was {_cell(entry['before'])}"
    if entry.get("pct"):
        text += f", {entry['pct']:+.1f}%"
    if entry.get("rows_added") is not None:
        text += f", {entry['rows_added']} row(s) added, {entry['rows_removed']} removed"
    return f" <span class=change>({text})</span>"


async def as_html(view: JobView) -> str:
    job, run = view.job, view.run
    parts = [f"<h1>{html.escape(job.name)}</h1>"]
    if run is None:
        parts.append("<p>This job has not run yet.</p>")
    else:
        when = run.finished_at.strftime("%Y-%m-%d %H:%M UTC") if run.finished_at else ""
        parts.append(f"<p class=note>Its latest run: {html.escape(run.status)}, {when}.</p>")
        if view.checked_at:
            parts.append(
                f"<p class=note>Checked again at "
                f"{html.escape(view.checked_at[:16].replace('T', ' '))} UTC: "
                "its inputs had not changed.</p>"
            )
        if run.error:
            parts.append(f"<p class=error>{html.escape(run.error)}</p>")
        parts.append("<h2>Values</h2>")
        for name, value in (run.results or {}).items():
            entry = (run.change or {}).get(name)
            if isinstance(value, dict) and "rows" in value:
                parts.append(f"<h3>{html.escape(name)}</h3>{_table(value)}{_change(entry)}")
            elif value is not None:
                parts.append(f"<p><b>{html.escape(name)}</b>: {_cell(value)}{_change(entry)}</p>")
        for name, data in view.charts:
            image = await chart_png(data, name)
            if image.png is not None:
                src = "data:image/png;base64," + b64encode(image.png).decode()
                parts.append(f'<img src="{src}" alt="{html.escape(name)}">')
            elif image.note:
                parts.append(f"<p class=note>{html.escape(image.note)}</p>")
        if run.checks:
            parts.append("<h2>Checks</h2><ul>")
            for check in run.checks:
                mark = "passed" if check.get("passed") else "failed"
                said = f": {html.escape(check['message'])}" if check.get("message") else ""
                parts.append(f"<li>{html.escape(check['name'])} {mark}{said}</li>")
            parts.append("</ul>")
    return PAGE.format(title=html.escape(job.name), body="".join(parts))


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title} · Workbench</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 56rem; padding: 2rem;
  color: #0f172a; }}
h1 {{ font-size: 1.4rem; }} h2 {{ font-size: 1.1rem; margin-top: 1.5rem; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #cbd5e1; padding: .2rem .5rem; }}
img {{ max-width: 100%; }} .note, .change {{ color: #475569; }} .error {{ color: #b91c1c; }}
</style></head>
<body><main>{body}</main></body></html>
"""

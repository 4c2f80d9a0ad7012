"""Jobs and their runs: reading and writing them (making a job's script is app.jobs.script's,
running it app.jobs.runner's)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import paginate
from app.errors import Conflict, NotFound, Unprocessable
from app.jobs import script
from app.jobs.compare import compare
from app.jobs.deliveries.secrets import public_alerts
from app.jobs.schemas import JobCreate, JobOut, JobRunBrief, JobRunOut, JobUpdate
from app.models import File, Project, Run, RunKind, RunStatus, Session, User
from app.models.jobs import Job, JobRun, JobRunStatus
from app.ownership import Role, one_visible
from app.runs.cell_code import python_for_sql

ACTIVE = (JobRunStatus.queued, JobRunStatus.running)


class JobRunInProgress(Conflict):
    def __init__(self) -> None:
        super().__init__(
            "This job is running already: wait for that run to end.", code="job_run_in_progress"
        )


class ChecksPending(Conflict):
    def __init__(self) -> None:
        super().__init__(
            "The job's checks are still being written: run it once they are.",
            code="job_checks_pending",
        )


async def get_job(db: AsyncSession, user: User, job_id: uuid.UUID, need: Role = Role.viewer) -> Job:
    query = select(Job).join(Project, Project.id == Job.project_id).where(Job.id == job_id)
    found: Job = await one_visible(
        db, user, query, NotFound("No such job.", code="job_not_found"), need
    )
    return found


async def get_job_run(
    db: AsyncSession, user: User, job_run_id: uuid.UUID, need: Role = Role.viewer
) -> JobRun:
    query = (
        select(JobRun).join(Project, Project.id == JobRun.project_id).where(JobRun.id == job_run_id)
    )
    missing = NotFound("No such job run.", code="job_run_not_found")
    found: JobRun = await one_visible(db, user, query, missing, need)
    return found


async def _runs_of(
    db: AsyncSession, project: Project, body: JobCreate
) -> tuple[Session, list[Run]]:
    session = await db.scalar(
        select(Session).where(Session.id == body.session_id, Session.project_id == project.id)
    )
    if session is None:
        raise NotFound("No such session in this project.", code="session_not_found")
    runs = list(
        await db.scalars(
            select(Run).where(Run.session_id == session.id).order_by(Run.created_at, Run.id)
        )
    )
    if body.run_ids is None:
        return session, [r for r in runs if r.status == RunStatus.succeeded]
    by_id = {r.id: r for r in runs}
    missing = [str(i) for i in body.run_ids if i not in by_id]
    if missing:
        raise NotFound(f"No such run in this session: {', '.join(missing)}.", code="run_not_found")
    chosen = [r for r in runs if r.id in set(body.run_ids)]
    unusable = [str(r.id) for r in chosen if r.status != RunStatus.succeeded]
    if unusable:
        raise Unprocessable(
            f"Only runs that succeeded can make a job; these did not: {', '.join(unusable)}.",
            code="run_not_usable",
        )
    return session, chosen


def pieces_of(runs: list[Run]) -> list[script.Piece]:
    pieces = []
    for number, run in enumerate(runs, start=1):
        cell = run.cell or {}
        steps = []
        for step in run.steps:
            code = step.code
            if run.kind == RunKind.cell and cell.get("language") == "sql" and code:
                code = python_for_sql(code, str(cell.get("source")), str(cell.get("variable")))
            steps.append(script.step_of(step.index, code, step.error, step.output))
        pieces.append(
            script.Piece(number, run.query if run.kind != RunKind.cell else "cell", steps)
        )
    return pieces


async def project_files(db: AsyncSession, project_id: uuid.UUID) -> dict[str, str]:
    """The project's files now: {name: sha256}."""
    rows = await db.execute(select(File.name, File.sha256).where(File.project_id == project_id))
    return {name: sha for name, sha in rows}


async def create(
    db: AsyncSession, project: Project, user: User, body: JobCreate, lease_until: datetime
) -> Job:
    """The job of the session's runs (its checks are written afterwards, see JobRunner).

    Raises:
        NotFound (session_not_found, run_not_found), Unprocessable (run_not_usable,
        nothing_ran).
    """
    source, runs = await _runs_of(db, project, body)
    files = await project_files(db, project.id)
    try:
        built = script.build(pieces_of(runs), set(files))
    except script.NothingRan as exc:
        raise Unprocessable(str(exc), code="nothing_ran") from None
    session = Session(project_id=project.id, title=f"Job · {body.name.strip()}", autonomy="auto")
    db.add(session)
    await db.flush()
    job = Job(
        project_id=project.id,
        name=body.name.strip(),
        source_session_id=source.id,
        source_run_ids=[str(r.id) for r in runs],
        session_id=session.id,
        code=built.code,
        tests="",
        params=built.params,
        results=built.results,
        alerts=[],
        autonomy="review",
        checks={"status": "writing", "note": None, "lease_until": lease_until.isoformat()},
        made_from={
            "files": {
                p["default"]: files[p["default"]] for p in built.params if p["kind"] == "file"
            }
        },
        created_by=user.id,
    )
    db.add(job)
    await db.flush()
    await db.refresh(job)
    return job


async def list_jobs(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[Job], int]:
    query = select(Job).where(Job.project_id == project.id).order_by(Job.created_at, Job.id)
    return await paginate(db, query, limit, offset)


def update(job: Job, body: JobUpdate) -> list[str]:
    """Apply the changes; the names of the fields that changed.

    Raises:
        Unprocessable: a parameter's kind changed, or a file/query parameter was dropped.
    """
    changed = []
    if body.name is not None and body.name.strip() != job.name:
        job.name = body.name.strip()
        changed.append("name")
    if body.autonomy is not None and body.autonomy != job.autonomy:
        job.autonomy = body.autonomy
        changed.append("autonomy")
    if body.params is not None:
        job.code, job.tests, job.params = _new_params(job, [p.model_dump() for p in body.params])
        changed.append("params")
    return changed


def _new_params(job: Job, given: list[dict[str, Any]]) -> tuple[str, str, list[dict[str, Any]]]:
    """The script, its tests and the parameters after a PATCH of `params`: kept ones matched
    by position (a rename keeps the position), new ones must be of kind `value`."""
    old = job.params
    if len(given) < len(old):
        raise Unprocessable(
            "A job's file and query parameters cannot be removed, only renamed or given "
            "new defaults.",
            code="param_removed",
        )
    renames: dict[str, str] = {}
    for before, after in zip(old, given, strict=False):
        if after["kind"] != before["kind"]:
            raise Unprocessable(
                f"The parameter {before['name']} is a {before['kind']}: its kind cannot change.",
                code="param_kind",
            )
        if after["kind"] == "query":
            after["source"] = before.get("source")
        if after["name"] != before["name"]:
            renames[before["name"]] = after["name"]
    marked = given[len(old) :]
    for param in marked:
        if param["kind"] != "value" or param["default"] is None:
            raise Unprocessable(
                "A new parameter is a value (kind `value`) with a default: the literal in "
                "the code it stands for.",
                code="param_invalid",
            )
    code = script.renamed(job.code, renames)
    cleaned = [{k: v for k, v in p.items() if k != "source" or p["kind"] == "query"} for p in given]
    return script.with_params(code, cleaned, marked), script.renamed(job.tests, renames), cleaned


def check_overrides(job: Job, params: dict[str, Any]) -> None:
    """Raises Unprocessable (unknown_param) for a name that is no parameter of the job."""
    unknown = sorted(set(params) - {p["name"] for p in job.params})
    if unknown:
        known = ", ".join(p["name"] for p in job.params) or "none"
        raise Unprocessable(
            f"The job has no parameter {', '.join(unknown)} (its parameters: {known}).",
            code="unknown_param",
        )


async def last_runs(db: AsyncSession, job_ids: list[uuid.UUID]) -> dict[uuid.UUID, JobRun]:
    found: dict[uuid.UUID, JobRun] = {}
    if not job_ids:
        return found
    rows = await db.scalars(
        select(JobRun).where(JobRun.job_id.in_(job_ids)).order_by(JobRun.created_at)
    )
    for row in rows:
        found[row.job_id] = row
    return found


def job_out(job: Job, last: JobRun | None) -> JobOut:
    brief = (
        None
        if last is None
        else JobRunBrief(id=last.id, status=last.status, finished_at=last.finished_at)
    )
    return JobOut.model_validate(
        {
            "id": job.id,
            "project_id": job.project_id,
            "name": job.name,
            "params": job.params,
            "results": job.results,
            "autonomy": job.autonomy,
            "alerts": public_alerts(job.alerts),
            "last_run": brief,
            "checks": {"status": job.checks.get("status", "ready"), "note": job.checks.get("note")},
            "source_session_id": job.source_session_id,
            "created_by": job.created_by,
            "created_at": job.created_at,
        }
    )


async def previous_succeeded(db: AsyncSession, job_run: JobRun) -> JobRun | None:
    """The job's last run that succeeded before `job_run` (what its change is measured from)."""
    found: JobRun | None = await db.scalar(
        select(JobRun)
        .where(
            JobRun.job_id == job_run.job_id,
            JobRun.id != job_run.id,
            JobRun.status == JobRunStatus.succeeded,
            JobRun.created_at <= job_run.created_at,
        )
        .order_by(JobRun.created_at.desc())
        .limit(1)
    )
    return found


async def fill_change(db: AsyncSession, job_run: JobRun) -> None:
    """A run that succeeded: each result's change since the last run that succeeded
    (`{name: {before, after, pct, ...}}`; on the first run every `before` is null). The
    run it was compared with is kept in its inputs (`compared_with`), so that its alerts do
    not look it up again."""
    if job_run.status != JobRunStatus.succeeded:
        return
    before = await previous_succeeded(db, job_run)
    job_run.change = compare(before.results if before is not None else None, job_run.results)
    compared_with = str(before.id) if before is not None else None
    job_run.inputs = {**(job_run.inputs or {}), "compared_with": compared_with}


async def list_job_runs(
    db: AsyncSession, job: Job, limit: int, offset: int
) -> tuple[list[JobRun], int]:
    query = (
        select(JobRun).where(JobRun.job_id == job.id).order_by(JobRun.created_at.desc(), JobRun.id)
    )
    return await paginate(db, query, limit, offset)


async def job_run_out(db: AsyncSession, job_run: JobRun) -> JobRunOut:
    out = JobRunOut.model_validate(job_run)
    if job_run.run_id is not None:
        run = await db.get(Run, job_run.run_id)
        if run is not None:
            out.artifacts = [
                {
                    "id": str(a.id),
                    "kind": a.kind,
                    "name": a.name,
                    "mime": a.mime,
                    "url": f"/api/v1/artifacts/{a.id}/content",
                }
                for a in run.artifacts
            ]
    return out

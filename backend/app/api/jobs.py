"""Jobs: a session's code made into a script with parameters and checks, its runs (history)
and its export."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response, status

from app import audit
from app.api.deps import CurrentUser, DbDep, NeededRole, OwnedProject, PageDep, SettingsDep
from app.audit import Action
from app.db import after_commit
from app.jobs import export, service, wiring
from app.jobs.runner import JobRunner
from app.jobs.schemas import JobCode, JobCreate, JobOut, JobRunCreate, JobRunOut, JobUpdate
from app.models.base import utcnow
from app.models.jobs import Job, JobRun
from app.schemas import Page

router = APIRouter(tags=["jobs"])


def get_job_runner(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.jobs
    return runner


JobRunnerDep = Annotated[JobRunner, Depends(get_job_runner)]


async def owned_job(job_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole) -> Job:
    return await service.get_job(db, user, job_id, need)


async def owned_job_run(
    job_run_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> JobRun:
    return await service.get_job_run(db, user, job_run_id, need)


OwnedJob = Annotated[Job, Depends(owned_job)]
OwnedJobRun = Annotated[JobRun, Depends(owned_job_run)]


async def _out(db: DbDep, job: Job) -> JobOut:
    last = await service.last_runs(db, [job.id])
    return await wiring.job_out(db, job, last.get(job.id))


@router.post(
    "/projects/{project_id}/jobs", response_model=JobOut, status_code=status.HTTP_201_CREATED
)
async def create_job(
    body: JobCreate, project: OwnedProject, db: DbDep, user: CurrentUser, runner: JobRunnerDep
) -> JobOut:
    """Make a job of a session's runs (all that succeeded, or `run_ids`): their code that ran,
    as a script with parameters (the files it read, its sources' queries) and named results.
    Its checks are then written by the model and run in the sandbox (`checks.status`:
    `writing` until then)."""
    job = await service.create(db, project, user, body, utcnow() + runner.lease * 3)
    about = {
        "job_id": str(job.id),
        "name": job.name,
        "runs": len(job.source_run_ids),
        "session_id": str(body.session_id),
    }
    await audit.record(db, project.id, user, Action.job_created, ("job", job.id), about)
    job_id = job.id

    async def write_checks() -> None:
        runner.checks.start(job_id)

    after_commit(db, write_checks)
    return service.job_out(job, None)


@router.get("/projects/{project_id}/jobs", response_model=Page[JobOut])
async def list_jobs(project: OwnedProject, db: DbDep, page: PageDep) -> Page[JobOut]:
    items, total = await service.list_jobs(db, project, page.limit, page.offset)
    last = await service.last_runs(db, [j.id for j in items])
    return Page(items=[await wiring.job_out(db, j, last.get(j.id)) for j in items], total=total)


@router.get("/jobs/{job_id}", response_model=JobOut)
async def get_job(job: OwnedJob, db: DbDep) -> JobOut:
    return await _out(db, job)


@router.patch("/jobs/{job_id}", response_model=JobOut)
async def update_job(
    body: JobUpdate, job: OwnedJob, db: DbDep, user: CurrentUser, settings: SettingsDep
) -> JobOut:
    """Rename it, give its parameters new defaults or names, mark a value of its code as a
    parameter (a new `value` parameter), set its autonomy, its alerts (422 `invalid_alert`),
    its schedule (422 `invalid_schedule`; null: on demand only) or pause it."""
    changed = service.update(job, body)
    changed += await wiring.apply_update(db, settings, job, body, user)
    await db.flush()
    if changed:
        about = {"job_id": str(job.id), "name": job.name, "fields": changed}
        await audit.record(db, job.project_id, user, Action.job_updated, ("job", job.id), about)
    return await _out(db, job)


@router.delete("/jobs/{job_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_job(job: OwnedJob, db: DbDep, user: CurrentUser) -> Response:
    """Remove the job and its history (its session and runs stay in the project)."""
    about = {"job_id": str(job.id), "name": job.name}
    await wiring.forget(db, job)
    await db.delete(job)
    await db.flush()
    await audit.record(db, job.project_id, user, Action.job_deleted, ("job", job.id), about)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/jobs/{job_id}/runs",
    response_model=JobRunOut,
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        409: {
            "description": "A run of the job is going (job_run_in_progress), or its checks "
            "are still written (job_checks_pending)"
        },
        429: {
            "description": "The project's job runs in the last hour reached "
            "JOB_RUNS_PER_HOUR (job_runs_per_hour), with Retry-After"
        },
    },
)
async def start_job_run(
    body: JobRunCreate, job: OwnedJob, db: DbDep, user: CurrentUser, runner: JobRunnerDep
) -> JobRunOut:
    """Run the job now, in the background, with no model: its checks, then its code, in the
    sandbox; follow it with GET /job-runs/{id}."""
    job_run = await runner.start_in(db, job, "manual", body.params, user)
    return await wiring.job_run_out(db, job_run)


@router.get("/jobs/{job_id}/runs", response_model=Page[JobRunOut])
async def list_job_runs(job: OwnedJob, db: DbDep, page: PageDep) -> Page[JobRunOut]:
    """The job's runs, newest first."""
    items, total = await service.list_job_runs(db, job, page.limit, page.offset)
    return Page(items=[await wiring.job_run_out(db, r) for r in items], total=total)


@router.get("/job-runs/{job_run_id}", response_model=JobRunOut)
async def get_job_run(job_run: OwnedJobRun, db: DbDep) -> JobRunOut:
    return await wiring.job_run_out(db, job_run)


@router.get("/jobs/{job_id}/code", response_model=JobCode)
async def get_job_code(job: OwnedJob) -> JobCode:
    """The job's script (`PARAMS`, `run(params) -> results`) and its tests."""
    return JobCode(script=job.code, tests=job.tests)


@router.get(
    "/jobs/{job_id}/export",
    response_class=Response,
    responses={
        200: {
            "description": "The job as a file (an attachment)",
            "content": {media: {} for media in export.MEDIA_TYPES.values()},
        }
    },
)
async def export_job(
    job: OwnedJob,
    db: DbDep,
    user: CurrentUser,
    format: Annotated[
        export.ExportFormat,
        Query(description="py: a zip of job.py and test_job.py; ipynb: a notebook (papermill)"),
    ] = "py",
) -> Response:
    """The job to run outside the workbench: `python job.py --param value` and `pytest`, or
    a notebook whose `parameters` cell papermill fills."""
    body = export.render(job, format)
    about = {
        "job_id": str(job.id),
        "name": job.name,
        "format": format,
        "title": job.name,
        "of": "job",
    }
    await audit.record(db, job.project_id, user, Action.export_downloaded, ("job", job.id), about)
    headers = {
        "Content-Disposition": f'attachment; filename="{export.file_name(job, format)}"',
        "X-Content-Type-Options": "nosniff",
    }
    return Response(body, media_type=export.MEDIA_TYPES[format], headers=headers)

"""A project's checks (questions with expected answers) and their runs (history)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response, status

from app import audit
from app.api.deps import CurrentUser, DbDep, NeededRole, OwnedProject, PageDep
from app.audit import Action
from app.checks import service
from app.checks.runner import CheckRunner
from app.checks.schemas import (
    CheckRunCreate,
    CheckRunOut,
    ProjectCheckCreate,
    ProjectCheckOut,
    ProjectCheckUpdate,
)
from app.models.knowledge import CheckRun, ProjectCheck
from app.schemas import Page

router = APIRouter(tags=["checks"])


def get_checks_runner(request: Request) -> CheckRunner:
    runner: CheckRunner = request.app.state.checks
    return runner


CheckRunnerDep = Annotated[CheckRunner, Depends(get_checks_runner)]


async def owned_check(
    check_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> ProjectCheck:
    return await service.get_check(db, user, check_id, need)


async def owned_check_run(
    check_run_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> CheckRun:
    return await service.get_check_run(db, user, check_run_id, need)


OwnedCheck = Annotated[ProjectCheck, Depends(owned_check)]
OwnedCheckRun = Annotated[CheckRun, Depends(owned_check_run)]


def _about(check: ProjectCheck, **more: object) -> dict[str, object]:
    return {"check_id": str(check.id), "question": audit.query_detail(check.question), **more}


@router.post(
    "/projects/{project_id}/checks",
    response_model=ProjectCheckOut,
    status_code=status.HTTP_201_CREATED,
)
async def create_check(
    body: ProjectCheckCreate, project: OwnedProject, db: DbDep, user: CurrentUser
) -> ProjectCheckOut:
    """Add a check: a question and the values its answer must end with (@name[value]), typed
    or taken from a run of the project that answered it (from_run_id)."""
    check = await service.create(db, project, user, body)
    about = _about(
        check, expected=check.expected, from_run_id=body.from_run_id and str(body.from_run_id)
    )
    await audit.record(db, project.id, user, Action.check_created, ("check", check.id), about)
    return ProjectCheckOut.model_validate(check)


@router.get("/projects/{project_id}/checks", response_model=Page[ProjectCheckOut])
async def list_checks(project: OwnedProject, db: DbDep, page: PageDep) -> Page[ProjectCheckOut]:
    items, total = await service.list_checks(db, project, page.limit, page.offset)
    return Page(items=[ProjectCheckOut.model_validate(c) for c in items], total=total)


@router.patch("/checks/{check_id}", response_model=ProjectCheckOut)
async def update_check(
    body: ProjectCheckUpdate, check: OwnedCheck, db: DbDep, user: CurrentUser
) -> ProjectCheckOut:
    changed = await service.update(db, check, body)
    if changed:
        about = _about(check, fields=changed)
        subject = ("check", check.id)
        await audit.record(db, check.project_id, user, Action.check_updated, subject, about)
    return ProjectCheckOut.model_validate(check)


@router.delete("/checks/{check_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_check(check: OwnedCheck, db: DbDep, user: CurrentUser) -> Response:
    """Remove a check; the results of earlier check runs keep their copy of it."""
    about = _about(check)
    await db.delete(check)
    await db.flush()
    await audit.record(db, check.project_id, user, Action.check_deleted, ("check", check.id), about)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/projects/{project_id}/check-runs",
    response_model=CheckRunOut,
    status_code=status.HTTP_202_ACCEPTED,
    responses={409: {"description": "The checks are running already (check_run_in_progress)"}},
)
async def start_check_run(
    body: CheckRunCreate,
    project: OwnedProject,
    db: DbDep,
    user: CurrentUser,
    runner: CheckRunnerDep,
) -> CheckRunOut:
    """Run every check of the project in the background, each asked as a question in a
    session made for the run; follow it with GET /check-runs/{id}."""
    check_run = await runner.start(db, project, user, body)
    results = await service.results_of(db, [check_run.id])
    return service.check_run_out(check_run, results[check_run.id])


@router.get("/projects/{project_id}/check-runs", response_model=Page[CheckRunOut])
async def list_check_runs(project: OwnedProject, db: DbDep, page: PageDep) -> Page[CheckRunOut]:
    """The project's check runs, newest first, each with its results."""
    items, total = await service.list_check_runs(db, project, page.limit, page.offset)
    results = await service.results_of(db, [c.id for c in items])
    return Page(items=[service.check_run_out(c, results[c.id]) for c in items], total=total)


@router.get("/check-runs/{check_run_id}", response_model=CheckRunOut)
async def get_check_run(check_run: OwnedCheckRun, db: DbDep) -> CheckRunOut:
    results = await service.results_of(db, [check_run.id])
    return service.check_run_out(check_run, results[check_run.id])

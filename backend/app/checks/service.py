"""A project's checks and the records of their runs: reading and writing them (the running
is app.checks.runner's)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.checks.schemas import (
    DEFAULT_NAME,
    CheckResultOut,
    CheckRunOut,
    ProjectCheckCreate,
    ProjectCheckUpdate,
    normalise_expected,
)
from app.cli.eval_dabench import extract
from app.db import paginate
from app.errors import Conflict, NotFound, Unprocessable
from app.models import Project, Run, RunStatus, Session, User
from app.models.knowledge import CheckResult, CheckRun, CheckRunStatus, ProjectCheck
from app.ownership import Role, one_visible

ACTIVE = (CheckRunStatus.queued, CheckRunStatus.running)


class CheckRunInProgress(Conflict):
    def __init__(self) -> None:
        super().__init__(
            "The project's checks are running already: wait for that run to finish.",
            code="check_run_in_progress",
        )


async def get_check(
    db: AsyncSession, user: User, check_id: uuid.UUID, need: Role = Role.viewer
) -> ProjectCheck:
    query = (
        select(ProjectCheck)
        .join(Project, Project.id == ProjectCheck.project_id)
        .where(ProjectCheck.id == check_id)
    )
    missing = NotFound("No such check.", code="check_not_found")
    check: ProjectCheck = await one_visible(db, user, query, missing, need)
    return check


async def get_check_run(
    db: AsyncSession, user: User, check_run_id: uuid.UUID, need: Role = Role.viewer
) -> CheckRun:
    query = (
        select(CheckRun)
        .join(Project, Project.id == CheckRun.project_id)
        .where(CheckRun.id == check_run_id)
    )
    missing = NotFound("No such check run.", code="check_run_not_found")
    found: CheckRun = await one_visible(db, user, query, missing, need)
    return found


async def _from_run(db: AsyncSession, project: Project, run_id: uuid.UUID) -> Run:
    """A succeeded run of this project (another project's is no run at all: 404)."""
    run = await db.scalar(
        select(Run)
        .join(Session, Session.id == Run.session_id)
        .where(Run.id == run_id, Session.project_id == project.id)
    )
    if run is None:
        raise NotFound("No such run in this project.", code="run_not_found")
    if run.status != RunStatus.succeeded or not (run.final_answer or "").strip():
        raise Unprocessable(
            "Only a run that succeeded with an answer can give a check its expected answer.",
            code="run_not_usable",
        )
    return run


def expected_of(answer: str) -> dict[str, str]:
    """The @name[value] pairs of an answer, else the whole answer as `answer`."""
    pairs = extract(answer)
    try:
        return normalise_expected(pairs or {DEFAULT_NAME: answer.strip()})
    except ValueError as exc:
        raise Unprocessable(
            f"The run's answer cannot be the expected answer ({exc}): give `expected`.",
            code="expected_invalid",
        ) from None


async def create(
    db: AsyncSession, project: Project, user: User, body: ProjectCheckCreate
) -> ProjectCheck:
    question = body.question
    expected = None if body.expected is None else normalise_expected(body.expected)
    if body.from_run_id is not None:
        run = await _from_run(db, project, body.from_run_id)
        question = question or run.query
        if expected is None:
            expected = expected_of(run.final_answer or "")
    if not question or expected is None:
        raise Unprocessable(
            "A check needs a question and its expected answer (or from_run_id, a run that "
            "answered it).",
            code="check_incomplete",
        )
    check = ProjectCheck(
        project_id=project.id,
        question=question.strip(),
        expected=expected,
        format=body.format.strip(),
        from_run_id=body.from_run_id,
        created_by=user.id,
    )
    db.add(check)
    await db.flush()
    await db.refresh(check)
    return check


async def list_checks(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[ProjectCheck], int]:
    query = (
        select(ProjectCheck)
        .where(ProjectCheck.project_id == project.id)
        .order_by(ProjectCheck.created_at, ProjectCheck.id)
    )
    return await paginate(db, query, limit, offset)


async def all_checks(db: AsyncSession, project_id: uuid.UUID) -> list[ProjectCheck]:
    rows = await db.scalars(
        select(ProjectCheck)
        .where(ProjectCheck.project_id == project_id)
        .order_by(ProjectCheck.created_at, ProjectCheck.id)
    )
    return list(rows)


async def update(db: AsyncSession, check: ProjectCheck, body: ProjectCheckUpdate) -> list[str]:
    """Apply the changes; the names of the fields that changed."""
    changed = []
    if body.question is not None and body.question.strip() != check.question:
        check.question = body.question.strip()
        changed.append("question")
    expected = None if body.expected is None else normalise_expected(body.expected)
    if expected is not None and expected != check.expected:
        check.expected = expected
        changed.append("expected")
    if body.format is not None and body.format.strip() != check.format:
        check.format = body.format.strip()
        changed.append("format")
    await db.flush()
    await db.refresh(check)
    return changed


# -- check runs ------------------------------------------------------------------------------


async def active_run(db: AsyncSession, project_id: uuid.UUID) -> CheckRun | None:
    found: CheckRun | None = await db.scalar(
        select(CheckRun)
        .where(CheckRun.project_id == project_id, CheckRun.status.in_(ACTIVE))
        .limit(1)
    )
    return found


async def list_check_runs(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[CheckRun], int]:
    query = (
        select(CheckRun)
        .where(CheckRun.project_id == project.id)
        .order_by(CheckRun.created_at.desc(), CheckRun.id)
    )
    return await paginate(db, query, limit, offset)


async def results_of(
    db: AsyncSession, check_run_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[CheckResult]]:
    by_run: dict[uuid.UUID, list[CheckResult]] = {i: [] for i in check_run_ids}
    if not check_run_ids:
        return by_run
    rows = await db.scalars(
        select(CheckResult)
        .where(CheckResult.check_run_id.in_(check_run_ids))
        .order_by(CheckResult.position)
    )
    for row in rows:
        by_run[row.check_run_id].append(row)
    return by_run


def check_run_out(check_run: CheckRun, results: list[CheckResult]) -> CheckRunOut:
    out = CheckRunOut.model_validate(check_run)
    out.results = [CheckResultOut.model_validate(r) for r in results]
    return out


def session_title(at: datetime) -> str:
    return f"Checks · {at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"

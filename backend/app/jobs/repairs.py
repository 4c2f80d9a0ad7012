"""A job's repairs as the API reads and decides them: shown (a run's, the job's pending
one, the history), approved (the job's code and tests replaced in one transaction) or
rejected (the job keeps its code). What makes a repair is app.jobs.repair."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.audit import Action
from app.db import paginate
from app.errors import Conflict, NotFound
from app.jobs.schemas import JobRepairItem, JobRepairOut
from app.models import User
from app.models.base import utcnow
from app.models.job_repairs import JobRepair, JobRepairStatus
from app.models.jobs import Job, JobRun, JobRunStatus
from app.observability import metrics

# A run's failure the code can be repaired for: a check failed, or the code raised. A run
# skipped, interrupted, refused by the server, or whose file or source is gone is not.
CODE_FAILED = "The job's code failed"
WAITING = (JobRepairStatus.repairing, JobRepairStatus.proposed)


def repairable(job_run: JobRun) -> bool:
    if job_run.status != JobRunStatus.failed:
        return False
    if any(not c.get("passed", True) for c in job_run.checks or []):
        return True
    return (job_run.error or "").startswith(CODE_FAILED)


async def waiting(db: AsyncSession, job_id: uuid.UUID) -> JobRepair | None:
    """The job's repair under way or waiting for a decision, if any (one at a time)."""
    found: JobRepair | None = await db.scalar(
        select(JobRepair)
        .where(JobRepair.job_id == job_id, JobRepair.status.in_(WAITING))
        .order_by(JobRepair.created_at.desc())
        .limit(1)
    )
    return found


async def mention(db: AsyncSession, job: Job, job_run: JobRun, error: str | None) -> str | None:
    """A failed run's error as its alerts say it: with the repair made for it, if any."""
    if error is None:
        return None
    made = await db.scalar(select(JobRepair.id).where(JobRepair.job_run_id == job_run.id))
    if made is None:
        return error
    then = (
        "it is applied at once if its checks pass"
        if job.autonomy == "auto"
        else "it will wait for an editor's approval in the job's history"
    )
    return f"{error} A repair of the job's code is being proposed; {then}."


async def _name(db: AsyncSession, user_id: uuid.UUID | None) -> str | None:
    if user_id is None:
        return None
    user = await db.get(User, user_id)
    return user.email if user is not None else None


async def out(db: AsyncSession, repair: JobRepair) -> JobRepairOut:
    return JobRepairOut.model_validate(_fields(repair, await _name(db, repair.decided_by)))


async def item(db: AsyncSession, repair: JobRepair) -> JobRepairItem:
    fields = _fields(repair, await _name(db, repair.decided_by))
    fields.update(
        job_run_id=repair.job_run_id, created_at=repair.created_at, applied_at=repair.applied_at
    )
    return JobRepairItem.model_validate(fields)


def _fields(repair: JobRepair, decided_by_name: str | None) -> dict[str, Any]:
    return {
        "id": repair.id,
        "status": repair.status,
        "reason": repair.reason,
        "diff": repair.diff,
        "checks": repair.checks or [],
        "note": repair.note,
        "proposed_at": repair.proposed_at,
        "decided_by_name": decided_by_name,
        "decided_at": repair.decided_at,
    }


async def of_run(db: AsyncSession, job_run_id: uuid.UUID) -> JobRepairOut | None:
    """The repair made after the run, if any."""
    repair = await db.scalar(
        select(JobRepair)
        .where(JobRepair.job_run_id == job_run_id)
        .order_by(JobRepair.created_at.desc())
        .limit(1)
    )
    return None if repair is None else await out(db, repair)


async def pending(db: AsyncSession, job_id: uuid.UUID) -> JobRepairOut | None:
    """The job's repair waiting for an editor's approval, if any."""
    repair = await waiting(db, job_id)
    if repair is None or repair.status != JobRepairStatus.proposed:
        return None
    return await out(db, repair)


async def history(
    db: AsyncSession, job: Job, limit: int, offset: int
) -> tuple[list[JobRepair], int]:
    query = (
        select(JobRepair)
        .where(JobRepair.job_id == job.id)
        .order_by(JobRepair.created_at.desc(), JobRepair.id)
    )
    return await paginate(db, query, limit, offset)


def _about(job: Job, repair: JobRepair) -> dict[str, Any]:
    return {
        "job_id": str(job.id),
        "name": job.name,
        "repair_id": str(repair.id),
        "job_run_id": str(repair.job_run_id),
        "reason": repair.reason[:300],
    }


async def apply(db: AsyncSession, job: Job, repair: JobRepair, auto: bool = False) -> None:
    """The job's code and tests become the repair's (in the caller's transaction). The test
    pinning its results is pinned anew on the data the repair was checked on: the data the
    job was made from no longer holds the code's premise."""
    if job.code != repair.old_code or job.tests != repair.old_tests:
        raise Conflict(
            "The job's code or tests changed since this repair was proposed; run the job "
            "again for a new one.",
            code="repair_stale",
        )
    job.code = repair.new_code or job.code
    job.tests = repair.new_tests if repair.new_tests is not None else job.tests
    checked_on = repair.checked_on or {}
    job.made_from = {
        "files": checked_on.get("files") or {},
        "results": checked_on.get("results") or {},
        "repaired_by": str(repair.id),
    }
    repair.status = JobRepairStatus.applied
    repair.applied_at = utcnow()
    about = {**_about(job, repair), "auto": auto}
    await audit.record(
        db, job.project_id, None, Action.job_repair_applied, ("job_repair", repair.id), about
    )
    metrics.JOB_REPAIRS.labels(JobRepairStatus.applied).inc()


async def decide(
    db: AsyncSession, job: Job, repair_id: uuid.UUID, approve: bool, user: User
) -> JobRepair:
    """Approve (then apply) or reject the job's proposed repair.

    Raises:
        NotFound (repair_not_found), Conflict (repair_not_pending: it is not `proposed`;
        repair_stale: the job's code changed since).
    """
    repair = await db.scalar(
        select(JobRepair)
        .where(JobRepair.id == repair_id, JobRepair.job_id == job.id)
        .with_for_update()
    )
    if repair is None:
        raise NotFound("No such repair of this job.", code="repair_not_found")
    if repair.status != JobRepairStatus.proposed:
        raise Conflict(
            f"This repair is {repair.status}, not waiting for a decision.",
            code="repair_not_pending",
        )
    repair.decided_by = user.id
    repair.decided_at = utcnow()
    subject = ("job_repair", repair.id)
    if not approve:
        repair.status = JobRepairStatus.rejected
        await audit.record(
            db, job.project_id, user, Action.job_repair_rejected, subject, _about(job, repair)
        )
        metrics.JOB_REPAIRS.labels(JobRepairStatus.rejected).inc()
        return repair
    repair.status = JobRepairStatus.approved
    await audit.record(
        db, job.project_id, user, Action.job_repair_approved, subject, _about(job, repair)
    )
    metrics.JOB_REPAIRS.labels(JobRepairStatus.approved).inc()
    await apply(db, job, repair)
    return repair


async def proposed(db: AsyncSession, job: Job, repair: JobRepair) -> None:
    """Audit a repair that was just proposed; apply it at once when the job's autonomy is
    `auto` (in the caller's transaction)."""
    await audit.record(
        db,
        job.project_id,
        None,
        Action.job_repair_proposed,
        ("job_repair", repair.id),
        _about(job, repair),
    )
    if job.autonomy == "auto":
        await apply(db, job, repair, auto=True)

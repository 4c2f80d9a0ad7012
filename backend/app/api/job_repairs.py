"""A job's repairs: the code the model proposed after a run failed, its history, and an
editor's approval (the job's code and tests replaced) or rejection."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from app.api.deps import CurrentUser, DbDep, PageDep
from app.api.jobs import OwnedJob
from app.jobs import repairs
from app.jobs.schemas import JobRepairDecision, JobRepairItem
from app.schemas import Page

router = APIRouter(tags=["jobs"])


@router.get("/jobs/{job_id}/repairs", response_model=Page[JobRepairItem])
async def list_job_repairs(job: OwnedJob, db: DbDep, page: PageDep) -> Page[JobRepairItem]:
    """The job's repairs, newest first: each with the failure it answers, the diff of the
    code and tests, the proposed code's checks, and who decided."""
    items, total = await repairs.history(db, job, page.limit, page.offset)
    return Page(items=[await repairs.item(db, r) for r in items], total=total)


@router.post(
    "/jobs/{job_id}/repairs/{repair_id}/approval",
    response_model=JobRepairItem,
    responses={
        409: {
            "description": "The repair is not waiting for a decision (repair_not_pending), "
            "or the job's code changed since it was proposed (repair_stale)"
        }
    },
)
async def decide_job_repair(
    repair_id: uuid.UUID, body: JobRepairDecision, job: OwnedJob, db: DbDep, user: CurrentUser
) -> JobRepairItem:
    """Approve (the job's code and tests become the repair's at once; its pinned test is
    pinned anew on the data the repair was checked on) or reject (the job keeps its code) a
    proposed repair. Editors only."""
    repair = await repairs.decide(db, job, repair_id, body.decision == "approve", user)
    await db.flush()
    return await repairs.item(db, repair)

"""What goes with a job besides its runs: its schedule, its alerts' deliveries and its share
link. job_schedules and job_deliveries keep the job's id as text (no foreign key, see
app.models.job_schedules), and a job's share has none either, so they are deleted here: with
the job (DELETE /jobs/{id}) and with every job of a project that is deleted."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Share
from app.models.job_schedules import JobDelivery, JobSchedule
from app.models.jobs import Job


async def forget_jobs(db: AsyncSession, job_ids: Sequence[uuid.UUID]) -> None:
    """Delete the jobs' schedules, deliveries and share links (in the caller's transaction)."""
    if not job_ids:
        return
    names = [str(job_id) for job_id in job_ids]
    await db.execute(delete(JobSchedule).where(JobSchedule.job_id.in_(names)))
    await db.execute(delete(JobDelivery).where(JobDelivery.job_id.in_(names)))
    await db.execute(delete(Share).where(Share.job_id.in_(list(job_ids))))


async def forget_project_jobs(db: AsyncSession, project_id: uuid.UUID) -> None:
    """As forget_jobs, for every job of a project about to be deleted."""
    job_ids = list(await db.scalars(select(Job.id).where(Job.project_id == project_id)))
    await forget_jobs(db, job_ids)

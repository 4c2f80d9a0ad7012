"""Where a job meets its schedule and its alerts: a finished run's alerts evaluated on its
results and change (queued as deliveries), a due tick started as a run (once per tick), and a
job's schedule and alerts as they are written and shown."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.errors import Conflict, NotFound, TooManyRequests, Unprocessable
from app.infra.storage import ObjectStorage
from app.jobs import alert_extras, alerting, cleanup, repairs, service, ticker
from app.jobs.alerts import ShareDelivery, validate_alerts
from app.jobs.deliveries import queue
from app.jobs.deliveries.messages import RunReport
from app.jobs.deliveries.secrets import seal_alerts
from app.jobs.runner import JobRunner
from app.jobs.schedule import ScheduleIn, parse_schedule
from app.jobs.schemas import JobDeliveryOut, JobOut, JobRunOut, JobUpdate
from app.models import User
from app.models.job_schedules import JobSchedule
from app.models.jobs import Job, JobRun, JobRunStatus
from app.shares import job_links
from app.sources.service import keyring_of

log = logging.getLogger(__name__)


def alerts_hook(
    factory: async_sessionmaker[AsyncSession], settings: Settings, storage: ObjectStorage
) -> Callable[[uuid.UUID], Awaitable[None]]:
    """The hook on a job run's end (JobRunner.on_job_run_finished): the job's alerts
    evaluated on the run (its results, its change since the last run that succeeded, its
    checks, its error) and their deliveries queued, with the run's first chart as a PNG for
    emails and the job's share link when an alert delivers to it. A skipped run alerts
    nothing."""

    async def after_run(job_run_id: uuid.UUID) -> None:
        async with factory() as db:
            job_run = await db.get(JobRun, job_run_id)
            job = await db.get(Job, job_run.job_id) if job_run is not None else None
            if job_run is None or job is None or job_run.status == JobRunStatus.skipped:
                return
            if not job.alerts:
                return
            # Whether a run came before: fill_change looked it up when the run ended.
            compared = (job_run.inputs or {}).get("compared_with") is not None
            report = RunReport(
                job_id=str(job.id),
                job_name=job.name,
                job_run_id=str(job_run.id),
                run_status=job_run.status,
                results=dict(job_run.results or {}),
                change=dict(job_run.change) if compared else None,
            )
            stored, checks = list(job.alerts), list(job_run.checks or [])
            error = job_run.error if job_run.status == JobRunStatus.failed else None
            error = await repairs.mention(db, job, job_run, error)
            run_id = job_run.run_id if job_run.status == JobRunStatus.succeeded else None
            job_id, project_id = job.id, job.project_id
        extras = alerting.Extras(
            chart=lambda: alert_extras.first_chart(factory, storage, run_id),
            share_url=lambda: alert_extras.share_url(factory, settings, job_id, project_id),
        )
        await alerting.alert_after_run(factory, settings, stored, report, checks, error, extras)

    return after_run


def schedule_fire(runner: JobRunner) -> Callable[[str, datetime], Awaitable[object]]:
    """The ticker's `fire`: a run of the job with trigger `schedule`, keyed by the tick's
    time (a tick fired again after a replica died starts no second run). A run that cannot
    start is logged, never retried: the next tick runs it."""

    async def fire(job_id: str, scheduled_for: datetime) -> object:
        try:
            return await runner.start_job_run(
                uuid.UUID(job_id), "schedule", scheduled_for=scheduled_for
            )
        except IntegrityError:
            log.info("job %s: its tick of %s has a run already", job_id, scheduled_for)
        except (Conflict, TooManyRequests, NotFound) as refused:
            log.warning("job %s: its scheduled run did not start: %s", job_id, refused)
        return None

    return fire


async def apply_update(
    db: AsyncSession, settings: Settings, job: Job, body: JobUpdate, by: User | None = None
) -> list[str]:
    """The alerts, schedule and pause of a PATCH (the rest is service.update's); the names
    of the fields given. Alerts that deliver to the share link make the job's link (as `by`)
    when it has none that opens.

    Raises:
        InvalidAlert (invalid_alert), InvalidSchedule (invalid_schedule), Unprocessable
        (no_schedule: `paused` given to a job with no schedule).
    """
    changed = []
    given = body.model_fields_set
    if "alerts" in given:
        raw = [a.model_dump(exclude_none=True) for a in body.alerts or []]
        alerts = validate_alerts(raw, [r["name"] for r in job.results])
        await alerting.check_alert_targets(settings, alerts)
        job.alerts = seal_alerts(alerts, keyring_of(settings), str(job.id), job.alerts)
        shared = any(isinstance(d, ShareDelivery) for a in alerts for d in a.deliver)
        if shared and by is not None:
            await job_links.ensure(db, job, by, keyring_of(settings))
        changed.append("alerts")
    if "schedule" in given:
        schedule = None if body.schedule is None else parse_schedule(body.schedule)
        await ticker.set_schedule(db, str(job.id), schedule)
        changed.append("schedule")
    if body.paused is not None:
        if body.paused:
            had = await ticker.pause(db, str(job.id))
        else:
            had = await ticker.resume(db, str(job.id)) is not None
        if not had:
            raise Unprocessable(
                "This job has no schedule to pause or resume: give it one (`schedule`) first.",
                code="no_schedule",
            )
        changed.append("paused")
    return changed


async def job_out(db: AsyncSession, job: Job, last: JobRun | None) -> JobOut:
    """The job as shown: its alerts' secrets as `***`, its schedule and next tick."""
    out = service.job_out(job, last)
    out.pending_repair = await repairs.pending(db, job.id)
    row = await ticker.schedule_of(db, str(job.id))
    if row is not None:
        out.schedule = schedule_in(row)
        out.paused = row.paused
        out.next_run_at = row.next_run_at
    return out


def schedule_in(row: JobSchedule) -> ScheduleIn:
    return ScheduleIn(cron=row.cron, every_minutes=row.every_minutes, timezone=row.timezone)


async def job_run_out(db: AsyncSession, job_run: JobRun) -> JobRunOut:
    """A job run as shown, with its alerts' deliveries."""
    out = await service.job_run_out(db, job_run)
    shown = await queue.of_run(db, str(job_run.id))
    out.deliveries = [JobDeliveryOut.model_validate(d) for d in shown]
    out.repair = await repairs.of_run(db, job_run.id)
    return out


async def forget(db: AsyncSession, job: Job) -> None:
    """A deleted job's schedule, deliveries and share link (in the caller's transaction)."""
    await cleanup.forget_jobs(db, [job.id])

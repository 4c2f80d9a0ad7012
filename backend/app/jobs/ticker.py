"""Schedules that fire: every replica runs a `ScheduleTicker`, and the database decides which
one fires each tick.

A due schedule is claimed with one UPDATE that sets a lease (lease_owner, lease_until) only
where no live lease is held (on PostgreSQL the rows are picked FOR UPDATE SKIP LOCKED; on
SQLite the single writer gives the same). The claimant fires the tick, then moves
next_run_at on with a compare-and-set on its own lease and the next_run_at it saw. A
replica that dies holding a lease leaves the tick due: once the lease has lapsed another
replica takes it up. The fire callback gets the tick's scheduled time, which is the same on
such a retry, so the run it starts can be keyed by (job_id, scheduled_for).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Table, bindparam, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs.schedule import Schedule, next_after, next_run
from app.models.base import utcnow
from app.models.job_schedules import JobSchedule

log = logging.getLogger(__name__)

Fire = Callable[[str, datetime], Awaitable[object]]
Clock = Callable[[], datetime]
# Due schedules one claim takes at most (a full batch is followed by another claim at once).
CLAIM_BATCH = 200
# Ticks of a batch whose callbacks run at once.
FIRE_CONCURRENCY = 16


@dataclass(frozen=True)
class DueTick:
    """A claimed tick: the job, the time it was due, and its schedule."""

    job_id: str
    scheduled_for: datetime
    schedule: Schedule


def _schedule_of(row: JobSchedule) -> Schedule:
    return Schedule(row.cron, row.every_minutes, row.timezone)


async def set_schedule(
    db: AsyncSession, job_id: str, schedule: Schedule | None, now: datetime | None = None
) -> datetime | None:
    """Give the job `schedule` (None: it runs on demand only); its next tick is the first
    after `now`. A paused job stays paused. Returns the next tick, or None.

    The caller's transaction commits it.
    """
    if schedule is None:
        await db.execute(delete(JobSchedule).where(JobSchedule.job_id == job_id))
        return None
    next_at = next_after(schedule, now or utcnow())
    row = await db.get(JobSchedule, job_id)
    if row is None:
        row = JobSchedule(job_id=job_id, paused=False)
        db.add(row)
    row.cron, row.every_minutes, row.timezone = (
        schedule.cron,
        schedule.every_minutes,
        schedule.timezone,
    )
    row.next_run_at = next_at
    row.lease_owner = row.lease_until = None
    await db.flush()
    return next_at


async def pause(db: AsyncSession, job_id: str) -> bool:
    """Stop the job's schedule from firing (a tick already claimed still runs). False when
    the job has no schedule."""
    result = await db.execute(
        update(JobSchedule).where(JobSchedule.job_id == job_id).values(paused=True)
    )
    return bool(getattr(result, "rowcount", 0))


async def resume(db: AsyncSession, job_id: str, now: datetime | None = None) -> datetime | None:
    """Let the job's schedule fire again from its next tick after `now` (ticks missed while
    paused are not made up). Returns that tick, or None when the job has no schedule."""
    row = await db.get(JobSchedule, job_id)
    if row is None:
        return None
    if row.paused:
        row.paused = False
        row.next_run_at = next_after(_schedule_of(row), now or utcnow())
        await db.flush()
    return row.next_run_at


async def schedule_of(db: AsyncSession, job_id: str) -> JobSchedule | None:
    """The job's schedule row (next_run_at, paused), or None."""
    return await db.get(JobSchedule, job_id)


class ScheduleTicker:
    """Looks for due schedules every `interval` seconds, claims them and fires them.

    Args:
        factory: sessions on the database the schedules live in.
        fire: called once per claimed tick with (job_id, scheduled_for): in the app,
            app.jobs.wiring.schedule_fire (the jobs' start_job_run). An exception is logged
            and the schedule moves on all the same (a tick is not retried because the run
            could not start).
        interval: seconds between looks.
        lease_seconds: how long a claim holds before another replica may take the tick.
        clock: the current time (tests move it).
    """

    def __init__(
        self,
        factory: async_sessionmaker[AsyncSession],
        fire: Fire,
        *,
        interval: float = 1.0,
        lease_seconds: float = 60.0,
        clock: Clock = utcnow,
        owner: str | None = None,
    ) -> None:
        self.factory = factory
        self.fire = fire
        self.interval = interval
        self.lease = timedelta(seconds=lease_seconds)
        self.clock = clock
        self.owner = owner or uuid.uuid4().hex
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run_forever(self) -> None:
        while True:
            try:
                while await self.tick() >= CLAIM_BATCH:
                    pass  # a full batch: more may be due at once
            except Exception as exc:  # the database is down: try again at the next look
                log.warning("could not fire due job schedules: %r", exc)
            await asyncio.sleep(self.interval)

    async def tick(self) -> int:
        """Claim what is due now and fire each tick once; how many were fired."""
        claimed = await self.claim()
        if claimed:
            slots = asyncio.Semaphore(FIRE_CONCURRENCY)

            async def fire(due: DueTick) -> None:
                async with slots:
                    await self._fire(due)

            await asyncio.gather(*(fire(due) for due in claimed))
            await self._advance(claimed)
        return len(claimed)

    async def claim(self) -> list[DueTick]:
        """Take the lease of the schedules due now (at most CLAIM_BATCH)."""
        now = self.clock()
        free = or_(JobSchedule.lease_until.is_(None), JobSchedule.lease_until < now)
        due = (
            select(JobSchedule.job_id)
            .where(JobSchedule.paused.is_(False), JobSchedule.next_run_at <= now, free)
            .order_by(JobSchedule.next_run_at)
            .limit(CLAIM_BATCH)
            .with_for_update(skip_locked=True)
        )
        claim = (
            update(JobSchedule)
            .where(JobSchedule.job_id.in_(due.scalar_subquery()), free)
            .where(JobSchedule.paused.is_(False), JobSchedule.next_run_at <= now)
            .values(lease_owner=self.owner, lease_until=now + self.lease)
            .returning(
                JobSchedule.job_id,
                JobSchedule.next_run_at,
                JobSchedule.cron,
                JobSchedule.every_minutes,
                JobSchedule.timezone,
            )
            .execution_options(synchronize_session=False)
        )
        async with self.factory() as db, db.begin():
            rows = (await db.execute(claim)).all()
        return [
            DueTick(job_id, next_at, Schedule(cron, every, zone))
            for job_id, next_at, cron, every, zone in rows
        ]

    async def _fire(self, due: DueTick) -> None:
        try:
            await self.fire(due.job_id, due.scheduled_for)
        except Exception:
            log.exception("job %s: its scheduled run could not start", due.job_id)

    async def _advance(self, fired: list[DueTick]) -> None:
        """Move each schedule to its next tick, where this replica still holds the claim (a
        schedule changed or paused meanwhile keeps what it was given). One transaction for
        the batch."""
        now = self.clock()
        # A Core UPDATE, executed for many rows at once.
        schedules = cast(Table, JobSchedule.__table__)
        table = schedules.c
        statement = (
            update(schedules)
            .where(
                table.job_id == bindparam("b_job"),
                table.lease_owner == self.owner,
                table.next_run_at == bindparam("b_due"),
            )
            .values(
                next_run_at=bindparam("b_next"),
                last_tick_at=bindparam("b_due"),
                lease_owner=None,
                lease_until=None,
            )
        )
        rows = [
            {
                "b_job": due.job_id,
                "b_due": due.scheduled_for,
                "b_next": next_run(due.schedule, due.scheduled_for, now),
            }
            for due in fired
        ]
        async with self.factory() as db, db.begin():
            connection = await db.connection()
            await connection.execute(statement, rows)

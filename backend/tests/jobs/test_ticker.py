"""The schedule ticker: two replicas on one database fire each tick exactly once, missed ticks
collapse into one run, paused schedules stay quiet, and a replica that died holding a tick
delays it, never loses it. On SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import session_factory
from app.jobs import ticker
from app.jobs.schedule import parse_schedule
from app.jobs.ticker import ScheduleTicker

START = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Fired:
    """What the tickers fired: (job_id, scheduled_for), in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, datetime]] = []

    async def __call__(self, job_id: str, scheduled_for: datetime) -> None:
        await asyncio.sleep(0)  # let the other replica interleave
        self.calls.append((job_id, scheduled_for))


async def add(engine: AsyncEngine, job_id: str, schedule: dict[str, object], at: datetime) -> None:
    async with session_factory(engine)() as db, db.begin():
        await ticker.set_schedule(db, job_id, parse_schedule(schedule), now=at)


async def row(engine: AsyncEngine, job_id: str) -> ticker.JobSchedule:
    async with session_factory(engine)() as db:
        found = await ticker.schedule_of(db, job_id)
        assert found is not None
        return found


async def test_two_replicas_fire_each_tick_exactly_once(
    engine: AsyncEngine, second_engine: AsyncEngine
) -> None:
    jobs = [f"job-{n:02}" for n in range(30)]
    for job_id in jobs:
        await add(engine, job_id, {"every_minutes": 5}, START - timedelta(minutes=5))
    clock, fired = Clock(), Fired()
    replicas = [
        ScheduleTicker(session_factory(e), fired, clock=clock, owner=name)
        for e, name in ((engine, "a"), (second_engine, "b"), (engine, "c"))
    ]
    for _ in range(3):
        await asyncio.gather(*(replica.tick() for replica in replicas))
    assert sorted(fired.calls) == [(job_id, START) for job_id in jobs]

    # The next tick, five minutes on: again once each, at its own time.
    clock.now = START + timedelta(minutes=5, seconds=1)
    for _ in range(3):
        await asyncio.gather(*(replica.tick() for replica in replicas))
    assert sorted(fired.calls[30:]) == [(job_id, START + timedelta(minutes=5)) for job_id in jobs]
    assert (await row(engine, "job-00")).next_run_at == START + timedelta(minutes=10)


async def test_the_loops_of_two_replicas_fire_a_due_tick_once(
    engine: AsyncEngine, second_engine: AsyncEngine
) -> None:
    await add(engine, "job-loop", {"cron": "*/5 * * * *"}, START - timedelta(minutes=5))
    clock, fired = Clock(START + timedelta(seconds=2)), Fired()
    replicas = [
        ScheduleTicker(session_factory(e), fired, interval=0.02, clock=clock)
        for e in (engine, second_engine)
    ]
    for replica in replicas:
        replica.start()
    try:
        for _ in range(2000):  # a bound on the wait, not a timing assertion
            if fired.calls and (await row(engine, "job-loop")).lease_owner is None:
                break
            await asyncio.sleep(0.01)
        # Both loops keep looking: nothing more is due until 08:05.
        for _ in range(5):
            await asyncio.sleep(0.05)
    finally:
        for replica in replicas:
            await replica.stop()
    assert fired.calls == [("job-loop", START)]
    assert (await row(engine, "job-loop")).next_run_at == START + timedelta(minutes=5)


async def test_missed_ticks_run_once_then_the_next_is_in_the_future(engine: AsyncEngine) -> None:
    an_hour_ago = START - timedelta(hours=1)
    await add(engine, "job-late", {"every_minutes": 5}, an_hour_ago - timedelta(minutes=5))
    clock, fired = Clock(START + timedelta(seconds=30)), Fired()
    replica = ScheduleTicker(session_factory(engine), fired, clock=clock)
    assert await replica.tick() == 1
    assert await replica.tick() == 0
    assert fired.calls == [("job-late", an_hour_ago)]
    found = await row(engine, "job-late")
    # The interval's rhythm is kept: the first tick after now, on the same five minutes.
    assert found.next_run_at == START + timedelta(minutes=5)
    assert found.last_tick_at == an_hour_ago


async def test_a_paused_schedule_does_not_fire_until_resumed(engine: AsyncEngine) -> None:
    await add(engine, "job-paused", {"every_minutes": 5}, START - timedelta(minutes=5))
    factory = session_factory(engine)
    async with factory() as db, db.begin():
        assert await ticker.pause(db, "job-paused")
    clock, fired = Clock(START + timedelta(minutes=30)), Fired()
    replica = ScheduleTicker(factory, fired, clock=clock)
    assert await replica.tick() == 0
    async with factory() as db, db.begin():
        resumed = await ticker.resume(db, "job-paused", now=clock.now)
    # Ticks missed while paused are not made up: the next is after the resumption.
    assert resumed == START + timedelta(minutes=35)
    assert await replica.tick() == 0
    clock.now = START + timedelta(minutes=35)
    assert await replica.tick() == 1
    assert fired.calls == [("job-paused", START + timedelta(minutes=35))]


async def test_a_replica_that_died_holding_a_tick_delays_it_but_does_not_lose_it(
    engine: AsyncEngine, second_engine: AsyncEngine
) -> None:
    await add(engine, "job-orphan", {"every_minutes": 15}, START - timedelta(minutes=15))
    clock, fired = Clock(START), Fired()
    dead = ScheduleTicker(session_factory(engine), fired, clock=clock, lease_seconds=60)
    assert [t.job_id for t in await dead.claim()] == ["job-orphan"]  # ...and then it died
    survivor = ScheduleTicker(session_factory(second_engine), fired, clock=clock)
    assert await survivor.tick() == 0  # the lease still holds
    clock.now = START + timedelta(seconds=61)
    assert await survivor.tick() == 1
    assert fired.calls == [("job-orphan", START)]
    assert (await row(engine, "job-orphan")).next_run_at == START + timedelta(minutes=15)


async def test_a_run_that_cannot_start_does_not_stop_the_schedule(engine: AsyncEngine) -> None:
    await add(engine, "job-broken", {"every_minutes": 5}, START - timedelta(minutes=5))

    async def refuses(job_id: str, scheduled_for: datetime) -> None:
        raise RuntimeError("the project's cap on job runs per hour is reached")

    replica = ScheduleTicker(session_factory(engine), refuses, clock=Clock())
    assert await replica.tick() == 1
    assert (await row(engine, "job-broken")).next_run_at == START + timedelta(minutes=5)


async def test_a_schedule_removed_or_changed_meanwhile_keeps_its_new_state(
    engine: AsyncEngine,
) -> None:
    await add(engine, "job-changed", {"every_minutes": 5}, START - timedelta(minutes=5))
    factory = session_factory(engine)

    async def changes_it(job_id: str, scheduled_for: datetime) -> None:
        async with factory() as db, db.begin():
            await ticker.set_schedule(db, job_id, parse_schedule({"cron": "0 8 * * MON"}), START)

    assert await ScheduleTicker(factory, changes_it, clock=Clock()).tick() == 1
    found = await row(engine, "job-changed")
    assert (found.cron, found.next_run_at) == ("0 8 * * MON", datetime(2026, 12, 7, 8, tzinfo=UTC))

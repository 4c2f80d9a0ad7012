"""Schedule benchmark: how late ticks fire with 1,000 scheduled jobs in a project.

Two tickers (two engines on one database, as two replicas have) look every
JOBS_TICK_SECONDS (1 s by default) and fire through a callback that records when it was
called. Two shapes of load, in SQLite (the embedded database) and, with --postgres, in
PostgreSQL (127.0.0.1:5432, a database made and dropped for the run):
- spread: 1,000 schedules every 5 minutes, their next ticks spread over 30 s;
- together: 1,000 schedules on the same cron minute (`0 8 * * MON` for every job), all due
  at once.
Prints, for each: ticks fired (target: each exactly once), and the lateness (fired minus
due) p50 / p95 / p99 / max, target max <= 5 s.

    make bench-jobs-schedule   (ARGS="--schedules 1000 --postgres")
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import delete, insert

from app.db import create_engine, session_factory, upgrade_database
from app.jobs.ticker import ScheduleTicker
from app.models import JobSchedule
from app.models.base import utcnow
from tests.support.services import create_postgres_database, drop_postgres_database

TARGET_MAX_SECONDS = 5.0


class Recorder:
    def __init__(self) -> None:
        self.fired: list[tuple[str, datetime, float]] = []

    async def __call__(self, job_id: str, scheduled_for: datetime) -> None:
        late = (utcnow() - scheduled_for).total_seconds()
        self.fired.append((job_id, scheduled_for, late))


async def _load(url: str, rows: list[dict[str, object]]) -> None:
    engine = create_engine(url)
    async with engine.begin() as conn:
        await conn.execute(delete(JobSchedule))
        await conn.execute(insert(JobSchedule), rows)
    await engine.dispose()


async def _run(
    url: str, rows: list[dict[str, object]], last_due: datetime, tick: float
) -> Recorder:
    await _load(url, rows)
    engines = [create_engine(url), create_engine(url)]
    recorder = Recorder()
    tickers = [
        ScheduleTicker(session_factory(engine), recorder, interval=tick) for engine in engines
    ]
    for ticker in tickers:
        ticker.start()
    deadline = time.monotonic() + (last_due - utcnow()).total_seconds() + 30
    while len(recorder.fired) < len(rows) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.2)
    await asyncio.sleep(2 * tick)  # anything fired twice would show now
    for ticker in tickers:
        await ticker.stop()
    for engine in engines:
        await engine.dispose()
    return recorder


def _print(name: str, recorder: Recorder, expected: int) -> None:
    counts = Counter((job, due) for job, due, _ in recorder.fired)
    twice = sum(1 for n in counts.values() if n > 1)
    lateness = sorted(late for _, _, late in recorder.fired)
    if not lateness:
        print(f"  {name}: nothing fired")
        return
    cuts = statistics.quantiles(lateness, n=100) if len(lateness) > 1 else lateness * 99
    worst = lateness[-1]
    verdict = "ok" if worst <= TARGET_MAX_SECONDS and twice == 0 else "MISSED"
    print(
        f"  {name}: fired {len(counts)}/{expected} ticks, {twice} twice; lateness "
        f"p50 {cuts[49]:.2f} s, p95 {cuts[94]:.2f} s, p99 {cuts[98]:.2f} s, "
        f"max {worst:.2f} s (target <= {TARGET_MAX_SECONDS:g} s: {verdict})"
    )


async def bench(label: str, url: str, count: int, tick: float) -> None:
    print(f"{label}:")
    start = utcnow() + timedelta(seconds=3)
    spread = [
        {
            "job_id": f"job-{n:05}",
            "every_minutes": 5,
            "timezone": "UTC",
            "paused": False,
            "next_run_at": start + timedelta(seconds=30 * n / count),
        }
        for n in range(count)
    ]
    _print("spread over 30 s", await _run(url, spread, start + timedelta(seconds=30), tick), count)
    together_at = utcnow() + timedelta(seconds=3)
    together = [
        {
            "job_id": f"job-{n:05}",
            "cron": "0 8 * * MON",
            "timezone": "Europe/Berlin",
            "paused": False,
            "next_run_at": together_at,
        }
        for n in range(count)
    ]
    _print("all due at once", await _run(url, together, together_at, tick), count)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--tick", type=float, default=1.0, help="JOBS_TICK_SECONDS")
    parser.add_argument("--postgres", action="store_true", help="also on PostgreSQL")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
        await asyncio.to_thread(upgrade_database, url)
        await bench("SQLite", url, args.schedules, args.tick)
    if args.postgres:
        made, name = await asyncio.to_thread(create_postgres_database)
        try:
            await asyncio.to_thread(upgrade_database, made)
            await bench("PostgreSQL", made, args.schedules, args.tick)
        finally:
            await asyncio.to_thread(drop_postgres_database, name)


if __name__ == "__main__":
    asyncio.run(main())

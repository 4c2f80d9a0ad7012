"""When a job runs by itself: a schedule (a cron expression or an interval, in a time zone),
checked when it is set, and the tick that follows a given time.

Cron expressions are read by cronsim (five fields, Debian cron's rules, DST handled the way
cron does: a time that does not exist that day runs at the first minute that does, a time
that happens twice runs once). A schedule may not fire more often than every
MIN_INTERVAL_MINUTES minutes.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from pydantic import BaseModel, ConfigDict, Field

from app.errors import Unprocessable

MIN_INTERVAL_MINUTES = 5
# An interval longer than a year is a mistake rather than a schedule.
MAX_INTERVAL_MINUTES = 366 * 24 * 60
# A fixed instant cron times are read from when checking how often an expression fires.
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class InvalidSchedule(Unprocessable):
    """A schedule that cannot be used: the sentence says why."""

    code = "invalid_schedule"


class ScheduleIn(BaseModel):
    """A schedule as a client sends it (API.md: `{cron?, every_minutes?, timezone}`)."""

    model_config = ConfigDict(extra="forbid")

    cron: str | None = Field(None, max_length=200, examples=["0 8 * * MON"])
    every_minutes: int | None = Field(None, examples=[60])
    timezone: str = Field("UTC", max_length=64, examples=["Europe/Berlin"])


@dataclass(frozen=True)
class Schedule:
    """A checked schedule: exactly one of `cron` and `every_minutes`, and a known time zone."""

    cron: str | None
    every_minutes: int | None
    timezone: str

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"timezone": self.timezone}
        if self.cron is not None:
            found["cron"] = self.cron
        else:
            found["every_minutes"] = self.every_minutes
        return found


def parse_schedule(given: ScheduleIn | dict[str, Any]) -> Schedule:
    """The checked schedule.

    Raises:
        InvalidSchedule: both or neither of cron/every_minutes, an unknown time zone, a cron
            expression that does not parse, or one that fires more often than every five
            minutes (the sentence names which).
    """
    raw = given if isinstance(given, ScheduleIn) else _read(given)
    if (raw.cron is None) == (raw.every_minutes is None):
        raise InvalidSchedule(
            "A schedule has either `cron` or `every_minutes` (one of them, not both)."
        )
    zone_name = raw.timezone.strip()
    try:
        ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidSchedule(
            f"{raw.timezone!r} is not a time zone this server knows (use an IANA name such as "
            "`Europe/Berlin` or `UTC`)."
        ) from None
    if raw.every_minutes is not None:
        if not MIN_INTERVAL_MINUTES <= raw.every_minutes <= MAX_INTERVAL_MINUTES:
            raise InvalidSchedule(
                f"every_minutes must be between {MIN_INTERVAL_MINUTES} and "
                f"{MAX_INTERVAL_MINUTES} (a job runs at most every {MIN_INTERVAL_MINUTES} "
                f"minutes); it was {raw.every_minutes}."
            )
        return Schedule(None, raw.every_minutes, zone_name)
    cron = " ".join((raw.cron or "").split())
    _check_cron(cron)
    return Schedule(cron, None, zone_name)


def _read(given: dict[str, Any]) -> ScheduleIn:
    try:
        return ScheduleIn.model_validate(given)
    except ValueError as exc:
        raise InvalidSchedule(f"The schedule is not valid: {exc}") from None


def _check_cron(cron: str) -> None:
    fields = cron.split()
    if len(fields) != 5:
        raise InvalidSchedule(
            f"The cron expression {cron!r} has {len(fields)} fields; it needs five "
            "(minute hour day-of-month month day-of-week, e.g. `0 8 * * MON`)."
        )
    try:
        parsed = CronSim(cron, _EPOCH)
    except CronSimError as exc:
        raise InvalidSchedule(f"The cron expression {cron!r} is not valid: {exc}.") from None
    gap = _shortest_gap(sorted(parsed.minutes), parsed.hours)
    if gap < MIN_INTERVAL_MINUTES:
        raise InvalidSchedule(
            f"The cron expression {cron!r} fires every {gap} minute(s) at times; a job runs "
            f"at most every {MIN_INTERVAL_MINUTES} minutes."
        )


def _shortest_gap(minutes: list[int], hours: set[int]) -> int:
    """The fewest minutes between two firings: within an hour, and across the end of one
    hour into the next where both hours fire (23 → 0 counted, whatever the day fields)."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(minutes)]
    if any((hour + 1) % 24 in hours for hour in hours):
        gaps.append(60 - minutes[-1] + minutes[0])
    return min(gaps, default=60)


def next_after(schedule: Schedule, t: datetime) -> datetime:
    """The schedule's first tick strictly after `t` (UTC), reckoned in its time zone.

    An interval counts from `t` itself; use `next_run` to keep an interval's rhythm.
    """
    if schedule.every_minutes is not None:
        return _whole_minute(t) + timedelta(minutes=schedule.every_minutes)
    local = t.astimezone(schedule.zone)
    return next(CronSim(schedule.cron or "", local)).astimezone(UTC)


def next_run(schedule: Schedule, fired_for: datetime, now: datetime) -> datetime:
    """The tick to set once the one of `fired_for` has fired, at `now`.

    Missed ticks collapse: after downtime the late tick fired once, and the next one is the
    first still in the future. An interval keeps its rhythm (`fired_for` + k intervals).
    """
    if schedule.every_minutes is not None:
        step = timedelta(minutes=schedule.every_minutes)
        behind = max(now - fired_for, timedelta(0))
        steps = max(1, math.floor(behind / step) + 1)
        return fired_for + steps * step
    return next_after(schedule, max(fired_for, now))


def _whole_minute(t: datetime) -> datetime:
    return t.astimezone(UTC).replace(second=0, microsecond=0)

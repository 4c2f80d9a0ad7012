"""Schedules: what is refused (with a 422 and the reason), and the next tick in the
schedule's time zone, DST included."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.api.errors import status_of
from app.jobs.schedule import InvalidSchedule, next_after, next_run, parse_schedule


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"cron": "*/1 * * * *"}, "fires every 1 minute(s)"),
        ({"cron": "0,3 8 * * *"}, "fires every 3 minute(s)"),
        ({"cron": "0 8 * *"}, "has 4 fields; it needs five"),
        ({"cron": "0 25 * * *"}, "is not valid: Bad hour"),
        ({"cron": "* * * * * *"}, "has 6 fields"),
        ({"every_minutes": 4}, "every_minutes must be between 5"),
        ({"every_minutes": 60, "cron": "0 * * * *"}, "either `cron` or `every_minutes`"),
        ({"timezone": "UTC"}, "either `cron` or `every_minutes`"),
        ({"cron": "0 8 * * MON", "timezone": "Mars/Olympus"}, "'Mars/Olympus' is not a time zone"),
        ({"every_minutes": "often"}, "The schedule is not valid"),
        ({"every_minutes": 10, "at": "noon"}, "The schedule is not valid"),
    ],
)
def test_a_schedule_that_cannot_be_used_is_refused_with_the_reason(
    given: dict[str, object], said: str
) -> None:
    with pytest.raises(InvalidSchedule) as refused:
        parse_schedule(given)
    assert said in refused.value.detail
    assert refused.value.code == "invalid_schedule"
    assert status_of(refused.value) == 422


def test_the_fastest_allowed_schedules_pass() -> None:
    assert parse_schedule({"cron": "*/5 * * * *"}).cron == "*/5 * * * *"
    assert parse_schedule({"cron": "58 7,8 * * *"}).cron == "58 7,8 * * *"  # an hour apart
    assert parse_schedule({"cron": "0,5 * * * *"}).cron == "0,5 * * * *"
    assert parse_schedule({"every_minutes": 5, "timezone": "Asia/Kolkata"}).every_minutes == 5
    # Across the hour: 08:58 and 09:01 are three minutes apart.
    with pytest.raises(InvalidSchedule):
        parse_schedule({"cron": "1,58 8,9 * * *"})


def test_monday_at_eight_is_eight_in_the_schedule_s_zone_across_dst() -> None:
    monday_eight = parse_schedule({"cron": "0 8 * * MON", "timezone": "Europe/Berlin"})
    # Summer time (UTC+2) ...
    assert next_after(monday_eight, datetime(2026, 10, 20, tzinfo=UTC)) == datetime(
        2026, 10, 26, 7, 0, tzinfo=UTC
    )
    # ... then winter time (UTC+1) after the last Sunday of October.
    assert next_after(monday_eight, datetime(2026, 10, 26, 7, 0, tzinfo=UTC)) == datetime(
        2026, 11, 2, 7, 0, tzinfo=UTC
    )


def test_a_time_that_does_not_exist_that_day_runs_at_the_next_one_that_does() -> None:
    nightly = parse_schedule({"cron": "30 2 * * *", "timezone": "Europe/Berlin"})
    # 02:30 on 29 March 2026 does not exist in Berlin (clocks go 02:00 → 03:00).
    assert next_after(nightly, datetime(2026, 3, 28, 12, tzinfo=UTC)) == datetime(
        2026, 3, 29, 1, 0, tzinfo=UTC
    )
    # On the day clocks go back, 02:30 happens twice: it runs once.
    ticks = [datetime(2026, 10, 24, 12, tzinfo=UTC)]
    for _ in range(3):
        ticks.append(next_after(nightly, ticks[-1]))
    assert ticks[1:] == [
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),
        datetime(2026, 10, 26, 1, 30, tzinfo=UTC),
        datetime(2026, 10, 27, 1, 30, tzinfo=UTC),
    ]


def test_missed_ticks_collapse_into_the_next_future_one() -> None:
    hourly = parse_schedule({"cron": "0 * * * *"})
    fired_for = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
    now = datetime(2026, 11, 30, 8, 20, tzinfo=UTC)  # back after five hours down
    assert next_run(hourly, fired_for, now) == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    every_7 = parse_schedule({"every_minutes": 7})
    assert next_run(every_7, fired_for, now) == datetime(2026, 11, 30, 8, 22, tzinfo=UTC)
    # On time: simply the following tick.
    assert next_run(every_7, fired_for, fired_for) == datetime(2026, 11, 30, 3, 7, tzinfo=UTC)

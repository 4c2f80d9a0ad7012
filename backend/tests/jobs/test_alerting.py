"""Where jobs meet alerts: webhook addresses refused when alerts are saved, and alerts
queued after a run without ever failing it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.api.errors import status_of
from app.db import session_factory
from app.jobs.alerting import Extras, alert_after_run, check_alert_targets
from app.jobs.alerts import InvalidAlert, validate_alerts
from app.jobs.compare import compare
from app.jobs.deliveries import queue
from app.jobs.deliveries.messages import RunReport
from app.jobs.deliveries.secrets import seal_alerts
from app.sources.service import keyring_of
from tests.conftest import stack_settings

JOB_ID = "5d3e4f10-0000-4000-8000-000000000003"
RUN_ID = "5d3e4f10-0000-4000-8000-0000000000cc"


async def test_a_webhook_the_rules_refuse_is_a_422_when_the_alerts_are_saved(
    tmp_path: Path,
) -> None:
    settings = stack_settings("embedded", tmp_path)
    alerts = validate_alerts(
        [
            {"when": "failed", "deliver": [{"channel": "share"}]},
            {
                "when": "failed",
                "deliver": [
                    {
                        "channel": "webhook",
                        "url": "http://169.254.169.254/latest/meta-data/",
                        "secret": "whsec-0123456789-abc",
                    }
                ],
            },
        ]
    )
    with pytest.raises(InvalidAlert) as refused:
        await check_alert_targets(settings, alerts)
    assert refused.value.detail == (
        "alert 2: 169.254.169.254:80 is a link-local or cloud-metadata address, which webhooks "
        "may not reach unless SOURCES_ALLOWED_HOSTS names it explicitly."
    )
    assert status_of(refused.value) == 422


LINK = "https://wb.example.com/api/v1/shared/" + "t" * 43


async def _link() -> str:
    return LINK


async def test_a_run_s_alerts_are_queued_and_a_broken_alert_never_fails_the_run(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = stack_settings("embedded", tmp_path)
    raw = [
        {"when": "change_pct", "result": "n", "value": 50, "deliver": [{"channel": "share"}]},
        {
            "when": "failed",
            "deliver": [{"channel": "email", "to": ["ops@example.com"]}],
        },
    ]
    stored = seal_alerts(validate_alerts(raw, ["n"]), keyring_of(settings), JOB_ID)
    factory = session_factory(engine)
    change = compare({"n": 2}, {"n": 4})
    report = RunReport(JOB_ID, "Counts", RUN_ID, "succeeded", {"n": 4}, change)
    assert (
        await alert_after_run(factory, settings, stored, report, extras=Extras(share_url=_link))
        == 1
    )
    async with factory() as db:
        shown = await queue.of_run(db, RUN_ID)
    assert [(d["channel"], d["status"], d["target"]) for d in shown] == [("share", "sent", LINK)]

    caplog.set_level(logging.ERROR)
    broken = [{"when": "sometimes", "deliver": []}]
    assert await alert_after_run(factory, settings, broken, report) == 0
    assert "its alerts were not queued" in caplog.text

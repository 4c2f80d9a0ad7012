"""Jobs joined to their alerts and schedules (issue 45): a run's change since the last run
that succeeded, a change_pct alert delivered to a real webhook receiver (signed) and a real
SMTP server, schedules set, refused and paused through PATCH /jobs/{id}, and a due tick that
starts exactly one run even when tickers fire it at once. On both stacks."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from app.jobs import wiring
from app.jobs.ticker import ScheduleTicker
from app.models.base import utcnow
from app.models.job_schedules import JobSchedule
from tests.api.jobs_support import CHECKS, make_job, run_job, two_questions, when
from tests.conftest import Api
from tests.jobs.receivers import Inbox, WebhookReceiver, smtp_server
from tests.support.llm import ScriptedLLM

HOOK_SECRET = "whsec-0123456789-abcdefghij"
# The same months, with South's February down: the total falls from 4,490.75 to 3,951.86.
LOWER = (
    b"region,month,revenue\nNorth,2026-01,1200.5\nSouth,2026-01,980\n"
    b"North,2026-02,1310.25\nSouth,2026-02,461.11\n"
)


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    yield from smtp_server()


@pytest.fixture
def hooks() -> Iterator[WebhookReceiver]:
    made = WebhookReceiver()
    yield made
    made.close()


def test_a_fall_of_12_percent_is_compared_and_alerted_by_webhook_and_mail(
    alice: Api,
    session: dict[str, Any],
    llm: ScriptedLLM,
    live: Any,
    smtp: tuple[Inbox, int],
    hooks: WebhookReceiver,
) -> None:
    inbox, port = smtp
    worker = live.state.jobs_background.deliveries
    settings = worker.settings
    worker.settings = settings.model_copy(
        update={"SMTP_HOST": "127.0.0.1", "SMTP_PORT": port, "SMTP_STARTTLS": False}
    )
    try:
        _alerted(alice, session, llm, inbox, hooks)
    finally:
        worker.settings = settings


def _alerted(
    alice: Api,
    session: dict[str, Any],
    llm: ScriptedLLM,
    inbox: Inbox,
    hooks: WebhookReceiver,
) -> None:
    project_id = session["project_id"]
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, project_id, session["id"])
    deliver = [
        {"channel": "email", "to": ["team@example.com"]},
        {"channel": "webhook", "url": hooks.url, "secret": HOOK_SECRET},
    ]
    alerts = [{"when": "change_pct", "result": "answer_1", "value": -10, "deliver": deliver}]
    unknown = alice.patch(
        f"/jobs/{job['id']}", json={"alerts": [{**alerts[0], "result": "profit"}]}
    )
    assert unknown.status_code == 422 and unknown.json()["code"] == "invalid_alert"
    assert "no result named 'profit'" in unknown.json()["detail"]
    secretless = [{**alerts[0], "deliver": [{"channel": "webhook", "url": hooks.url}]}]
    refused = alice.patch(f"/jobs/{job['id']}", json={"alerts": secretless})
    assert refused.status_code == 422 and refused.json()["code"] == "invalid_alert"
    saved = alice.patch(f"/jobs/{job['id']}", json={"alerts": alerts})
    assert saved.status_code == 200, saved.text
    shown_hook = {"channel": "webhook", "url": hooks.url, "secret": "***"}
    assert saved.json()["alerts"][0]["deliver"] == [deliver[0], shown_hook]
    for shown in (saved.text, alice.get(f"/jobs/{job['id']}").text):
        assert HOOK_SECRET not in shown and "secret_sealed" not in shown

    first = run_job(alice, job["id"])
    assert first["status"] == "succeeded", first
    assert first["change"]["answer_1"]["before"] is None
    assert first["change"]["answer_1"]["after"] == 4490.75
    assert first["deliveries"] == []

    assert alice.upload(project_id, "sales data.csv", LOWER).status_code == 201
    second = run_job(alice, job["id"])
    assert second["status"] == "succeeded", second
    change = second["change"]["answer_1"]
    assert (change["before"], change["after"]) == (4490.75, 3951.86)
    assert round(change["pct"], 1) == -12.0
    done = when(
        alice,
        f"/job-runs/{second['id']}",
        lambda r: len(r["deliveries"]) == 2 and all(d["status"] == "sent" for d in r["deliveries"]),
    )
    assert {d["channel"] for d in done["deliveries"]} == {"email", "webhook"}
    assert HOOK_SECRET not in json.dumps(done)

    [(headers, body)] = hooks.requests
    expected = hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Workbench-Signature"] == f"sha256={expected}"
    posted = json.loads(body)
    assert posted["run"]["id"] == second["id"]
    [(to, message)] = inbox.messages
    assert to == ["team@example.com"]
    text = message.get_body(preferencelist=("plain",))
    assert text is not None
    sentence = (
        "answer_1 fell 12% since the last run (4,490.75 → 3,951.86), below the \u221210% alert."
    )
    assert sentence in text.get_content()
    history = alice.get(f"/jobs/{job['id']}/runs").json()["items"]
    assert [len(r["deliveries"]) for r in history] == [2, 0]


def test_schedules_are_set_refused_paused_and_fire_once_a_tick(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: Any
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    path = f"/jobs/{job['id']}"
    bad = alice.patch(path, json={"schedule": {"cron": "61 * * * *"}})
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_schedule", bad.text
    assert alice.get(path).json()["schedule"] is None

    every = alice.patch(path, json={"schedule": {"every_minutes": 5, "timezone": "Europe/Berlin"}})
    assert every.status_code == 200, every.text
    body = every.json()
    assert body["schedule"] == {"cron": None, "every_minutes": 5, "timezone": "Europe/Berlin"}
    assert body["paused"] is False and body["next_run_at"] is not None

    paused = alice.patch(path, json={"paused": True}).json()
    assert paused["paused"] is True and paused["next_run_at"] is not None
    resumed = alice.patch(path, json={"paused": False}).json()
    assert resumed["paused"] is False

    async def due_now_and_tick_twice() -> int:
        async with live.state.session_factory() as db:
            await db.execute(
                update(JobSchedule)
                .where(JobSchedule.job_id == job["id"])
                .values(next_run_at=utcnow() - timedelta(minutes=1))
            )
            await db.commit()
        fire = wiring.schedule_fire(live.state.jobs)
        tickers = [ScheduleTicker(live.state.session_factory, fire) for _ in range(2)]
        counts = await asyncio.gather(*(t.tick() for t in tickers))
        return sum(counts)

    assert live.call(due_now_and_tick_twice()) <= 1  # (the app's own ticker may take it)
    runs = when(
        alice,
        f"{path}/runs",
        lambda p: p["total"] == 1 and p["items"][0]["status"] not in ("queued", "running"),
    )
    [scheduled] = runs["items"]
    assert scheduled["trigger"] == "schedule" and scheduled["scheduled_for"] is not None
    later = alice.get(path).json()["next_run_at"]
    assert later > scheduled["scheduled_for"]

    async def fire_the_same_tick_again() -> None:
        from datetime import datetime

        tick = datetime.fromisoformat(scheduled["scheduled_for"])
        await wiring.schedule_fire(live.state.jobs)(job["id"], tick)

    live.call(fire_the_same_tick_again())  # a replica that died before moving the tick on
    assert alice.get(f"{path}/runs").json()["total"] == 1

    removed = alice.patch(path, json={"schedule": None}).json()
    assert removed["schedule"] is None and removed["next_run_at"] is None


def test_pausing_needs_a_schedule_and_deleting_a_job_deletes_it(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: Any
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    unscheduled = alice.patch(f"/jobs/{job['id']}", json={"paused": True})
    assert unscheduled.status_code == 422 and unscheduled.json()["code"] == "no_schedule"
    scheduled = alice.patch(f"/jobs/{job['id']}", json={"schedule": {"cron": "0 8 * * 1"}})
    assert scheduled.status_code == 200, scheduled.text
    assert alice.delete(f"/jobs/{job['id']}").status_code == 204

    async def left() -> JobSchedule | None:
        async with live.state.session_factory() as db:
            return await db.get(JobSchedule, str(uuid.UUID(job["id"])))

    assert live.call(left()) is None

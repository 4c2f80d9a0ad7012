"""Alert deliveries end to end, on SQLite and PostgreSQL: a % change alert mailed to a real
SMTP server with the values, the change and the chart inline, and posted to a real webhook
receiver with a valid signature; retries with backoff; one replica per attempt; secrets
never shown."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config import Settings
from app.db import session_factory
from app.jobs.alerts import evaluate, load_alerts, validate_alerts
from app.jobs.compare import compare
from app.jobs.deliveries import queue
from app.jobs.deliveries.messages import RunReport
from app.jobs.deliveries.secrets import public_alerts, seal_alerts
from app.jobs.deliveries.worker import DeliveryWorker
from app.mail.sender import MailSender
from app.models import JobDelivery
from app.observability.metrics import JOB_DELIVERIES
from app.sources.service import keyring_of
from tests.conftest import stack_settings
from tests.jobs.receivers import Inbox, WebhookReceiver, smtp_server

JOB_ID = "6f1c2a52-0000-4000-8000-000000000001"
RUN_ID = "6f1c2a52-0000-4000-8000-0000000000aa"
HOOK_SECRET = "whsec-0123456789-abcdefghij"
SMTP_SECRET = "smtp-password-9876543210-zyx"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
START = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
PREVIOUS = {"revenue": 48210, "regions": [{"region": "north"}, {"region": "south"}]}
CURRENT = {"revenue": 42233, "regions": [{"region": "north"}, {"region": "east"}]}


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    yield from smtp_server()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    made = WebhookReceiver()
    yield made
    made.close()


def settings_for(tmp_path: Path, smtp_port: int = 1, **more: Any) -> Settings:
    given: dict[str, Any] = {
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": smtp_port,
        "SMTP_STARTTLS": False,
        "SMTP_FROM": "Workbench <wb@example.com>",
        "JOBS_DELIVERY_BACKOFF_SECONDS": 30,
        "JOBS_DELIVERY_MAX_ATTEMPTS": 4,
    }
    return stack_settings("embedded", tmp_path, **{**given, **more})


# The job's share link (app.shares.job_links), as the alerts hook finds it.
LINK = "https://wb.example.com/api/v1/shared/" + "t" * 43


async def queue_run(
    engine: AsyncEngine, settings: Settings, deliver: list[dict[str, Any]], chart: bytes | None
) -> None:
    """What app.jobs.wiring's hook on a run's end does: alerts evaluated, deliveries queued."""
    raw = [{"when": "change_pct", "result": "revenue", "value": -10, "deliver": deliver}]
    stored = seal_alerts(validate_alerts(raw, ["revenue", "regions"]), keyring_of(settings), JOB_ID)
    change = compare(PREVIOUS, CURRENT)
    triggered = evaluate(load_alerts(stored), "succeeded", CURRENT, change, [])
    report = RunReport(JOB_ID, "Weekly revenue", RUN_ID, "succeeded", CURRENT, change, chart)
    async with session_factory(engine)() as db, db.begin():
        await queue.enqueue(db, report, triggered, now=START, share_url=LINK)


def worker(engine: AsyncEngine, settings: Settings, clock: Clock) -> DeliveryWorker:
    return DeliveryWorker(
        settings, session_factory(engine), MailSender(), keyring_of(settings), clock=clock
    )


async def history(engine: AsyncEngine) -> list[dict[str, Any]]:
    async with session_factory(engine)() as db:
        return await queue.of_run(db, RUN_ID)


async def test_a_change_alert_mails_the_values_the_change_and_the_chart(
    engine: AsyncEngine, tmp_path: Path, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    settings = settings_for(tmp_path, port)
    email = {"channel": "email", "to": ["Team@Example.com", "cfo@example.com"]}
    shared_before = JOB_DELIVERIES.labels("share", "sent")._value.get()
    await queue_run(engine, settings, [email, {"channel": "share"}], PNG)
    assert JOB_DELIVERIES.labels("share", "sent")._value.get() == shared_before + 1
    assert await worker(engine, settings, Clock()).deliver_due() == 1

    [(to, message)] = inbox.messages
    assert to == ["team@example.com", "cfo@example.com"]
    sentence = "revenue fell 12.4% since the last run (48,210 → 42,233), below the \u221210% alert."
    # (An encoded header may fold with a space beside the arrow.)
    assert " ".join(message["Subject"].replace("→", " → ").split()) == f"Weekly revenue: {sentence}"
    text = message.get_body(preferencelist=("plain",))
    assert text is not None
    body = text.get_content()
    assert sentence in body
    assert "revenue: 42,233 (was 48,210, \u221212.4%)" in body
    assert "regions: a table of 2 rows (was 2, 1 row(s) added, 1 removed)" in body
    assert f"Its latest run: {LINK}" in body  # (the alert delivers to the share link too)
    html = message.get_body(preferencelist=("html",))
    assert html is not None
    [image] = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert image.get_content() == PNG
    assert f'src="cid:{image["Content-ID"].strip("<>")}"' in html.get_content()
    assert await history(engine) == [
        {
            "channel": "email",
            "target": "team@example.com, cfo@example.com",
            "status": "sent",
            "attempts": 1,
            "last_error": None,
            "sent_at": START,
        },
        {
            "channel": "share",
            "target": LINK,
            "status": "sent",
            "attempts": 1,
            "last_error": None,
            "sent_at": START,
        },
    ]


async def test_a_webhook_gets_a_signed_slack_compatible_body(
    engine: AsyncEngine, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    settings = settings_for(tmp_path)
    hook = {"channel": "webhook", "url": receiver.url, "secret": HOOK_SECRET}
    await queue_run(engine, settings, [hook], PNG)
    assert await worker(engine, settings, Clock()).deliver_due() == 1

    [(headers, body)] = receiver.requests
    expected = hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Workbench-Signature"] == f"sha256={expected}"
    assert headers["Content-Type"] == "application/json"
    sent = json.loads(body)
    assert sent["text"] == (
        "Weekly revenue: revenue fell 12.4% since the last run (48,210 → 42,233), "
        "below the \u221210% alert."
    )
    assert sent["change"]["revenue"] == {
        "before": 48210,
        "after": 42233,
        "pct": -12.3978,
        "changed": True,
    }
    assert sent["job"] == {"id": JOB_ID, "name": "Weekly revenue"}
    assert sent["chart"] == {"name": "chart.png"}  # the image goes by email only
    [shown] = await history(engine)
    assert (shown["status"], shown["attempts"]) == ("sent", 1)


async def test_a_receiver_that_fails_twice_gets_it_on_the_third_attempt(
    engine: AsyncEngine, second_engine: AsyncEngine, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    receiver.statuses = [500, 503]
    settings = settings_for(tmp_path)
    hook = {"channel": "webhook", "url": receiver.url, "secret": HOOK_SECRET}
    await queue_run(engine, settings, [hook], None)
    clock = Clock()
    replicas = [worker(engine, settings, clock), worker(second_engine, settings, clock)]
    sent_before = JOB_DELIVERIES.labels("webhook", "sent")._value.get()

    async def both() -> int:
        first, second = await asyncio.gather(*(r.deliver_due() for r in replicas))
        return first + second

    assert await both() == 1  # one replica took it
    [shown] = await history(engine)
    assert shown["status"] == "queued" and shown["attempts"] == 1
    assert (
        shown["last_error"]
        == f"The webhook at 127.0.0.1:{receiver.port} answered 500 Internal Server Error."
    )
    assert await both() == 0  # waits its backoff: 30 s
    clock.now = START + timedelta(seconds=30)
    assert await both() == 1
    assert (await history(engine))[0]["attempts"] == 2
    clock.now = START + timedelta(seconds=89)
    assert await both() == 0  # then 60 s
    clock.now = START + timedelta(seconds=90)
    assert await both() == 1
    [shown] = await history(engine)
    assert (shown["status"], shown["attempts"], shown["last_error"]) == ("sent", 3, None)
    assert len(receiver.requests) == 3
    assert JOB_DELIVERIES.labels("webhook", "sent")._value.get() == sent_before + 1


async def test_an_smtp_server_that_cannot_take_it_fails_after_the_last_attempt_without_secrets(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(
        tmp_path,
        1,  # nothing listens there
        SMTP_USERNAME="alerts",
        SMTP_PASSWORD=SMTP_SECRET,
        JOBS_DELIVERY_MAX_ATTEMPTS=2,
    )
    email = {"channel": "email", "to": ["team@example.com"]}
    await queue_run(engine, settings, [email], None)
    clock = Clock()
    caplog.set_level(logging.DEBUG)
    sender = worker(engine, settings, clock)
    assert await sender.deliver_due() == 1
    clock.now = START + timedelta(seconds=30)
    assert await sender.deliver_due() == 1
    clock.now = START + timedelta(hours=1)
    assert await sender.deliver_due() == 0
    [shown] = await history(engine)
    assert (shown["status"], shown["attempts"]) == ("failed", 2)
    assert shown["last_error"].startswith("Could not reach the SMTP server 127.0.0.1:1")
    assert SMTP_SECRET not in json.dumps(await stored_rows(engine), default=str)
    assert SMTP_SECRET not in caplog.text


async def stored_rows(engine: AsyncEngine) -> list[dict[str, Any]]:
    async with session_factory(engine)() as db:
        rows = await db.scalars(select(JobDelivery))
        return [
            {c.name: getattr(row, c.key) for c in JobDelivery.__table__.columns} for row in rows
        ]


async def test_a_webhook_secret_is_never_shown_nor_kept_in_the_clear(
    engine: AsyncEngine, tmp_path: Path, receiver: WebhookReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = settings_for(tmp_path)
    keyring = keyring_of(settings)
    hook = {"channel": "webhook", "url": receiver.url, "secret": HOOK_SECRET}
    raw = [{"when": "changed", "result": "revenue", "deliver": [hook]}]
    stored = seal_alerts(validate_alerts(raw, ["revenue"]), keyring, JOB_ID)
    assert HOOK_SECRET not in json.dumps(stored)
    shown = public_alerts(stored)
    assert shown == [
        {
            "when": "changed",
            "result": "revenue",
            "deliver": [{"channel": "webhook", "url": receiver.url, "secret": "***"}],
        }
    ]
    # Sent back as shown (`***`), or with no secret, it keeps the stored one.
    again = seal_alerts(validate_alerts(shown), keyring, JOB_ID, previous=stored)
    assert again[0]["deliver"][0]["secret_sealed"] == stored[0]["deliver"][0]["secret_sealed"]

    await queue_run(engine, settings, [hook], None)
    await worker(engine, settings, Clock()).deliver_due()
    [(headers, body)] = receiver.requests
    assert HOOK_SECRET not in body.decode() and HOOK_SECRET not in json.dumps(headers)
    everything = json.dumps([await history(engine), await stored_rows(engine)], default=str)
    assert HOOK_SECRET not in everything
    assert HOOK_SECRET not in caplog.text


async def test_a_forbidden_webhook_fails_at_once_with_the_reason_and_others_still_go(
    engine: AsyncEngine, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    settings = settings_for(tmp_path, HOST="127.0.0.1", PORT=8000)
    metadata = "http://169.254.169.254/latest/meta-data/"
    itself = "http://127.0.0.1:8000/api/v1/users"
    deliver = [
        {"channel": "webhook", "url": url, "secret": HOOK_SECRET}
        for url in (metadata, itself, receiver.url)
    ]
    await queue_run(engine, settings, deliver, None)
    assert await worker(engine, settings, Clock()).deliver_due() == 3
    shown = {d["target"]: d for d in await history(engine)}
    assert (shown[metadata]["status"], shown[metadata]["attempts"]) == ("failed", 1)
    assert shown[metadata]["last_error"] == (
        "169.254.169.254:80 is a link-local or cloud-metadata address, which webhooks may not "
        "reach unless SOURCES_ALLOWED_HOSTS names it explicitly."
    )
    assert (shown[itself]["status"], shown[itself]["attempts"]) == ("failed", 1)
    assert "127.0.0.1:8000 is the workbench itself" in shown[itself]["last_error"]
    assert shown[receiver.url]["status"] == "sent"
    assert len(receiver.requests) == 1


async def test_a_delivery_held_by_a_replica_that_died_is_taken_up_after_its_lease(
    engine: AsyncEngine, second_engine: AsyncEngine, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    settings = settings_for(tmp_path, JOBS_LEASE_SECONDS=60)
    hook = {"channel": "webhook", "url": receiver.url, "secret": HOOK_SECRET}
    await queue_run(engine, settings, [hook], None)
    async with session_factory(engine)() as db, db.begin():
        [held] = await queue.claim(db, "dead-replica", START, timedelta(seconds=60), 10)
    assert held.attempt == 1  # ...and then that replica died, mid-send
    clock = Clock()
    survivor = worker(second_engine, settings, clock)
    assert await survivor.deliver_due() == 0
    clock.now = START + timedelta(seconds=61)
    assert await survivor.deliver_due() == 1
    [shown] = await history(engine)
    assert (shown["status"], shown["attempts"]) == ("sent", 2)
    assert len(receiver.requests) == 1

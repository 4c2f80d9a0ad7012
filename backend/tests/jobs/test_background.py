"""The app's lifespan runs the delivery worker (JOBS_SCHEDULER): a delivery queued in the
app's database reaches its webhook, signed, on both stacks."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.jobs.alerts import evaluate, load_alerts, validate_alerts
from app.jobs.compare import compare
from app.jobs.deliveries import queue
from app.jobs.deliveries.messages import RunReport
from app.jobs.deliveries.secrets import seal_alerts
from app.sources.service import keyring_of
from tests.jobs.receivers import WebhookReceiver
from tests.support.server import LiveServer

JOB_ID = "0b9e6c1d-0000-4000-8000-000000000002"
RUN_ID = "0b9e6c1d-0000-4000-8000-0000000000bb"
SECRET = "whsec-lifespan-0123456789"


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    made = WebhookReceiver()
    yield made
    made.close()


def test_the_running_app_sends_queued_deliveries(
    live: LiveServer, receiver: WebhookReceiver
) -> None:
    raw = [
        {
            "when": "above",
            "result": "refunds",
            "value": 100,
            "deliver": [{"channel": "webhook", "url": receiver.url, "secret": SECRET}],
        }
    ]
    stored = seal_alerts(validate_alerts(raw, ["refunds"]), keyring_of(live.settings), JOB_ID)
    results = {"refunds": 130}
    change = compare({"refunds": 90}, results)
    triggered = evaluate(load_alerts(stored), "succeeded", results, change)

    async def enqueue() -> None:
        async with live.state.session_factory() as db, db.begin():
            report = RunReport(JOB_ID, "Refunds", RUN_ID, "succeeded", results, change)
            await queue.enqueue(db, report, triggered)

    async def history() -> list[dict[str, Any]]:
        async with live.state.session_factory() as db:
            return await queue.of_run(db, RUN_ID)

    live.call(enqueue())
    deadline = time.monotonic() + 120  # a bound on the wait, not a timing assertion
    while live.call(history())[0]["status"] == "queued" and time.monotonic() < deadline:
        time.sleep(0.1)
    [shown] = live.call(history())
    assert (shown["status"], shown["attempts"]) == ("sent", 1)
    [(headers, body)] = receiver.requests
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Workbench-Signature"] == f"sha256={digest}"
    assert json.loads(body)["text"] == "Refunds: refunds is 130, above the 100 alert."

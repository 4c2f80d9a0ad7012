"""Where jobs meet their alerts: checking an alert's webhook addresses when the alerts are
saved (a 422 with the reason, before any run), and, when a run has ended, evaluating the
job's alerts and queueing their deliveries — which never fails the run."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.jobs.alerts import (
    Alert,
    EmailDelivery,
    InvalidAlert,
    ShareDelivery,
    Triggered,
    WebhookDelivery,
    evaluate,
    load_alerts,
)
from app.jobs.chart_image import ChartImage
from app.jobs.deliveries import queue
from app.jobs.deliveries.messages import RunReport
from app.jobs.deliveries.targets import DeliveryFailed, webhook_address

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Extras:
    """What a message may carry besides the values, looked up only when an alert holds that
    needs it: the run's first chart (name, image) for emails, the job's share link."""

    chart: Callable[[], Awaitable[tuple[str, ChartImage] | None]] | None = None
    share_url: Callable[[], Awaitable[str | None]] | None = None


def _delivers(triggered: Sequence[Triggered], kind: type) -> bool:
    return any(isinstance(d, kind) for t in triggered for d in t.alert.deliver)


async def _with_extras(
    report: RunReport, triggered: Sequence[Triggered], extras: Extras
) -> tuple[RunReport, str | None]:
    share_url = None
    if extras.share_url is not None and _delivers(triggered, ShareDelivery):
        share_url = await extras.share_url()
    if extras.chart is not None and _delivers(triggered, EmailDelivery):
        chart = await extras.chart()
        if chart is not None:
            name, image = chart
            report = dataclasses.replace(
                report, chart_png=image.png, chart_name=name, chart_note=image.note
            )
    return report, share_url


async def check_alert_targets(settings: Settings, alerts: Sequence[Alert]) -> None:
    """Refuse alerts whose webhooks the outbound rules would refuse (checked again before
    every attempt: a name may resolve elsewhere later).

    Raises:
        InvalidAlert: the first refused webhook, with the rule's sentence.
    """
    for number, alert in enumerate(alerts, 1):
        for target in alert.deliver:
            if isinstance(target, WebhookDelivery):
                try:
                    await webhook_address(settings, target.url)
                except DeliveryFailed as refused:
                    raise InvalidAlert(f"alert {number}: {refused.sentence}") from None


async def alert_after_run(
    factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    stored_alerts: Sequence[dict[str, Any]] | None,
    report: RunReport,
    checks: Sequence[dict[str, Any]] = (),
    error: str | None = None,
    extras: Extras | None = None,
) -> int:
    """Evaluate the job's alerts on a run that ended and queue the deliveries of those that
    hold, in a transaction of its own; how many deliveries were queued.

    Never raises: whatever goes wrong is logged, and the run stays as it ended.

    Args:
        factory: sessions on the app's database.
        settings: JOBS_ALERT_CHART_MAX_BYTES.
        stored_alerts: the job's alerts as stored (seal_alerts).
        report: the run: its status, results, change (None on the job's first run), chart.
        checks: the run's checks, `[{name, passed, message}]`.
        error: the run's error sentence, when it failed.
        extras: the chart and share link, looked up when an alert holds that needs them.
    """
    try:
        alerts = load_alerts(stored_alerts)
        triggered = evaluate(
            alerts, report.run_status, report.results, report.change, checks, error=error
        )
        if not triggered:
            return 0
        report, share_url = await _with_extras(report, triggered, extras or Extras())
        async with factory() as db, db.begin():
            made = await queue.enqueue(
                db,
                report,
                triggered,
                chart_max_bytes=settings.JOBS_ALERT_CHART_MAX_BYTES,
                share_url=share_url,
            )
        return len(made)
    except Exception:
        log.exception("job %s run %s: its alerts were not queued", report.job_id, report.job_run_id)
        return 0

"""The deliveries of a job run's alerts, as rows: queued when the run ends, claimed by one
replica at a time (a lease taken by compare-and-set, as schedules are), and settled as
sent, retried later with exponential backoff, or failed after the last attempt.

One delivery is one message to one target (an email's recipients, a webhook URL, the share
link): alerts of the same run that go to the same target share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.jobs.alerts import EmailDelivery, ShareDelivery, Triggered, WebhookDelivery
from app.jobs.deliveries.messages import RunReport, build_payload
from app.models.base import utcnow
from app.models.job_schedules import DeliveryChannel, DeliveryStatus, JobDelivery
from app.observability.metrics import JOB_DELIVERIES

SHARE_TARGET = "share link"
NO_LINK = (
    "The job has no share link that opens (revoked, expired, or whoever made it lost access "
    "to the project): save its alerts again to make a new one."
)


def _target(deliver: object) -> tuple[DeliveryChannel, str, str | None]:
    """(channel, target, sealed secret) of one `deliver` entry of an alert."""
    if isinstance(deliver, EmailDelivery):
        return DeliveryChannel.email, ", ".join(deliver.to), None
    if isinstance(deliver, WebhookDelivery):
        return DeliveryChannel.webhook, deliver.url, deliver.secret_sealed
    return DeliveryChannel.share, SHARE_TARGET, None


async def enqueue(
    db: AsyncSession,
    report: RunReport,
    triggered: Sequence[Triggered],
    *,
    chart_max_bytes: int = 2_000_000,
    now: datetime | None = None,
    share_url: str | None = None,
) -> list[JobDelivery]:
    """Queue the deliveries of the alerts that held after a run (their alerts loaded with
    load_alerts, so webhook secrets are sealed). A share delivery is recorded as sent at
    once, its target the job's link (`share_url`: it shows the latest run whenever it is
    opened), or as failed when the job has no link that opens; the messages of alerts that
    deliver to the link carry it too.

    The caller's transaction commits them; whatever happens to them later never changes
    the run.
    """
    now = now or utcnow()
    groups: dict[tuple[DeliveryChannel, str], tuple[str | None, list[Triggered]]] = {}
    for item in triggered:
        for deliver in item.alert.deliver:
            channel, target, sealed = _target(deliver)
            _, items = groups.setdefault((channel, target), (sealed, []))
            if item not in items:
                items.append(item)
    made = []
    for (channel, target), (sealed, items) in groups.items():
        shared = any(isinstance(d, ShareDelivery) for t in items for d in t.alert.deliver)
        link = share_url if shared else None
        payload = build_payload(report, items, chart_max_bytes, share_url=link)
        if channel == DeliveryChannel.share and share_url is not None:
            target = share_url
        row = JobDelivery(
            job_id=report.job_id,
            job_run_id=report.job_run_id,
            channel=channel,
            target=target,
            payload=payload,
            secret_sealed=sealed,
            created_at=now,
            attempts=0,
            status=DeliveryStatus.queued,
            next_attempt_at=now,
        )
        if channel == DeliveryChannel.share:
            row.attempts, row.next_attempt_at = 1, None
            if share_url is not None:
                row.status, row.sent_at = DeliveryStatus.sent, now
            else:
                row.status, row.last_error = DeliveryStatus.failed, NO_LINK
        db.add(row)
        made.append(row)
    await db.flush()
    for row in made:
        if row.channel == DeliveryChannel.share:
            JOB_DELIVERIES.labels(row.channel.value, row.status.value).inc()
    return made


async def of_run(db: AsyncSession, job_run_id: str) -> list[dict[str, Any]]:
    """A run's deliveries as its history shows them (API.md: `{channel, status, attempts}`,
    with the target, the last error and when it was sent); never a secret or the payload."""
    rows = await db.scalars(
        select(JobDelivery)
        .where(JobDelivery.job_run_id == job_run_id)
        .order_by(JobDelivery.created_at, JobDelivery.channel, JobDelivery.target)
    )
    return [
        {
            "channel": row.channel.value,
            "target": row.target,
            "status": row.status.value,
            "attempts": row.attempts,
            "last_error": row.last_error,
            "sent_at": row.sent_at,
        }
        for row in rows
    ]


@dataclass(frozen=True)
class Claimed:
    """A delivery this replica holds the lease of, with its attempt's number."""

    id: Any
    job_id: str
    channel: DeliveryChannel
    target: str
    payload: dict[str, Any]
    secret_sealed: str | None
    attempt: int


async def claim(
    db: AsyncSession, owner: str, now: datetime, lease: timedelta, limit: int
) -> list[Claimed]:
    """Take the lease of the deliveries due now, counting the attempt each is about to make."""
    free = or_(JobDelivery.lease_until.is_(None), JobDelivery.lease_until < now)
    due_now = (
        JobDelivery.status == DeliveryStatus.queued,
        JobDelivery.next_attempt_at <= now,
        free,
    )
    due = (
        select(JobDelivery.id)
        .where(*due_now)
        .order_by(JobDelivery.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    statement = (
        update(JobDelivery)
        .where(JobDelivery.id.in_(due.scalar_subquery()), *due_now)
        .values(lease_owner=owner, lease_until=now + lease, attempts=JobDelivery.attempts + 1)
        .returning(
            JobDelivery.id,
            JobDelivery.job_id,
            JobDelivery.channel,
            JobDelivery.target,
            JobDelivery.payload,
            JobDelivery.secret_sealed,
            JobDelivery.attempts,
        )
        .execution_options(synchronize_session=False)
    )
    rows = (await db.execute(statement)).all()
    return [Claimed(*row) for row in rows]


async def settle(
    db: AsyncSession,
    delivery: Claimed,
    owner: str,
    now: datetime,
    *,
    error: str | None,
    retry_at: datetime | None,
) -> DeliveryStatus:
    """Record how an attempt went: sent (no error), queued again for `retry_at`, or failed
    (an error and no retry). Only the lease's holder settles it."""
    values: dict[str, object]
    if error is None:
        status, values = DeliveryStatus.sent, {"sent_at": now, "last_error": None}
    elif retry_at is not None:
        status, values = DeliveryStatus.queued, {"next_attempt_at": retry_at, "last_error": error}
    else:
        status, values = DeliveryStatus.failed, {"next_attempt_at": None, "last_error": error}
    await db.execute(
        update(JobDelivery)
        .where(JobDelivery.id == delivery.id, JobDelivery.lease_owner == owner)
        .values(status=status, lease_owner=None, lease_until=None, **values)
        .execution_options(synchronize_session=False)
    )
    return status

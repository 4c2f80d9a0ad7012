"""The jobs' sealed secrets moved to the current key (`workbench admin reencrypt-sources`,
after SECRET_KEY changed with the old one in SOURCES_PREVIOUS_SECRET_KEYS): each webhook's
signing secret in a job's alerts and in its queued deliveries (bound to the job's id), and
each job share link's token (bound to the share's id)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Share
from app.models.job_schedules import JobDelivery
from app.models.jobs import Job
from app.sources.credentials import CannotDecrypt, Keyring


def _again(keyring: Keyring, sealed: str, bound_to: str) -> str | None:
    """`sealed` under the current key (None: no known key opens it)."""
    try:
        return keyring.seal(keyring.open(sealed, bound_to), bound_to)
    except CannotDecrypt:
        return None


async def reseal_all(db: AsyncSession, keyring: Keyring) -> tuple[int, list[str]]:
    """Seal the jobs' secrets again with the current key (in the caller's transaction).

    Returns:
        How many were sealed again, and what no known key opens (`project/job`, left as it
        is: its webhook's secret must be given again, its link made again).
    """
    resealed, lost = 0, []
    for job in await db.scalars(select(Job).order_by(Job.id)):
        alerts: list[dict[str, Any]] = []
        changed = False
        for alert in job.alerts or []:
            targets = []
            for target in alert.get("deliver", []):
                sealed = target.get("secret_sealed")
                if sealed and not keyring.is_current(sealed):
                    again = _again(keyring, sealed, str(job.id))
                    if again is None:
                        lost.append(f"{job.project_id}/{job.name} (webhook {target.get('url')})")
                    else:
                        target, changed, resealed = (
                            {**target, "secret_sealed": again},
                            True,
                            resealed + 1,
                        )
                targets.append(target)
            alerts.append({**alert, "deliver": targets})
        if changed:
            job.alerts = alerts
    deliveries = await db.scalars(
        select(JobDelivery).where(JobDelivery.secret_sealed.is_not(None)).order_by(JobDelivery.id)
    )
    for delivery in deliveries:
        assert delivery.secret_sealed is not None
        if keyring.is_current(delivery.secret_sealed):
            continue
        again = _again(keyring, delivery.secret_sealed, delivery.job_id)
        if again is not None:  # (a lost one fails its next attempt, as its job's alert does)
            delivery.secret_sealed, resealed = again, resealed + 1
    for share in await db.scalars(select(Share).where(Share.token_sealed.is_not(None))):
        assert share.token_sealed is not None
        if keyring.is_current(share.token_sealed):
            continue
        again = _again(keyring, share.token_sealed, str(share.id))
        if again is None:
            lost.append(f"the share link {share.id} of job {share.job_id}")
        else:
            share.token_sealed, resealed = again, resealed + 1
    await db.flush()
    return resealed, lost

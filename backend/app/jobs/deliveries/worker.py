"""The delivery worker: on every replica, it takes the deliveries that are due (one replica
each, by lease) and sends them by email or webhook; an attempt that fails is tried again
after a wait that doubles each time, until JOBS_DELIVERY_MAX_ATTEMPTS, then the delivery is
failed with its last error. Nothing here touches the job's run."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.jobs.deliveries import queue
from app.jobs.deliveries.messages import email_message, webhook_body
from app.jobs.deliveries.queue import Claimed
from app.jobs.deliveries.secrets import open_secret
from app.jobs.deliveries.targets import DeliveryFailed
from app.jobs.deliveries.webhook import post_webhook
from app.mail.sender import MailFailed, MailSender
from app.models.base import utcnow
from app.models.job_schedules import DeliveryChannel
from app.observability.metrics import JOB_DELIVERIES
from app.sources.credentials import CannotDecrypt, Keyring

log = logging.getLogger(__name__)

# Deliveries one look takes at most, and how many of them are sent at once.
CLAIM_BATCH = 50
CONCURRENCY = 8


class DeliveryWorker:
    """Sends due deliveries; `deliver_due()` is one look, `start()` looks every interval.

    Args:
        settings: SMTP, webhook timeout, attempts and backoff (JOBS_*).
        factory: sessions on the database the deliveries live in.
        mail: the app's mail sender.
        keyring: opens webhook secrets (app.sources.service.keyring_of).
        clock: the current time (tests move it).
    """

    def __init__(
        self,
        settings: Settings,
        factory: async_sessionmaker[AsyncSession],
        mail: MailSender,
        keyring: Keyring,
        *,
        clock: Callable[[], datetime] = utcnow,
        owner: str | None = None,
    ) -> None:
        self.settings = settings
        self.factory = factory
        self.mail = mail
        self.keyring = keyring
        self.clock = clock
        self.owner = owner or uuid.uuid4().hex
        self._slots = asyncio.Semaphore(CONCURRENCY)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run_forever(self) -> None:
        while True:
            try:
                await self.deliver_due()
            except Exception as exc:  # the database is down: try again at the next look
                log.warning("could not send due job alert deliveries: %r", exc)
            await asyncio.sleep(self.settings.JOBS_TICK_SECONDS)

    async def deliver_due(self) -> int:
        """Send what is due now; how many attempts were made."""
        lease = timedelta(seconds=self.settings.JOBS_LEASE_SECONDS)
        async with self.factory() as db, db.begin():
            claimed = await queue.claim(db, self.owner, self.clock(), lease, CLAIM_BATCH)
        await asyncio.gather(*(self._attempt(delivery) for delivery in claimed))
        return len(claimed)

    async def _attempt(self, delivery: Claimed) -> None:
        async with self._slots:
            error, retry = None, False
            try:
                await self._send(delivery)
            except DeliveryFailed as exc:
                error, retry = exc.sentence, exc.retry
            except MailFailed as exc:
                error, retry = str(exc), True
            except Exception as exc:  # never the run's concern; said in the history
                log.exception("job %s: delivery %s failed", delivery.job_id, delivery.id)
                error, retry = f"The delivery failed unexpectedly ({type(exc).__name__}).", True
        now = self.clock()
        retry_at = None
        if (
            error is not None
            and retry
            and delivery.attempt < self.settings.JOBS_DELIVERY_MAX_ATTEMPTS
        ):
            wait = self.settings.JOBS_DELIVERY_BACKOFF_SECONDS * 2 ** (delivery.attempt - 1)
            retry_at = now + timedelta(seconds=wait)
        async with self.factory() as db, db.begin():
            status = await queue.settle(
                db, delivery, self.owner, now, error=error, retry_at=retry_at
            )
        outcome = "retrying" if status == "queued" else status.value
        JOB_DELIVERIES.labels(delivery.channel.value, outcome).inc()
        if error is not None:
            log.info(
                "job %s: %s delivery attempt %d: %s",
                delivery.job_id,
                delivery.channel.value,
                delivery.attempt,
                error,
            )

    async def _send(self, delivery: Claimed) -> None:
        if delivery.channel == DeliveryChannel.email:
            to = [address.strip() for address in delivery.target.split(",") if address.strip()]
            message = email_message(delivery.payload, self.settings.SMTP_FROM, to)
            await self.mail.send_message(self.settings, message)
        elif delivery.channel == DeliveryChannel.webhook:
            try:
                secret = open_secret(self.keyring, delivery.secret_sealed, delivery.job_id)
            except CannotDecrypt as exc:
                raise DeliveryFailed(
                    f"The webhook's secret cannot be read: {exc}.", retry=False
                ) from None
            body = webhook_body(delivery.payload)
            await post_webhook(self.settings, delivery.target, body, secret)

"""What jobs do in the background of every replica (with JOBS_SCHEDULER): fire due
schedules (ScheduleTicker) and send due alert deliveries (DeliveryWorker). The database
decides which replica does each, so every replica may run both."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.jobs.deliveries.worker import DeliveryWorker
from app.jobs.ticker import Fire, ScheduleTicker
from app.mail.sender import MailSender
from app.sources.service import keyring_of


class JobsBackground:
    """The schedule ticker and the delivery worker of one process."""

    def __init__(
        self, settings: Settings, factory: async_sessionmaker[AsyncSession], mail: MailSender
    ) -> None:
        self.settings = settings
        self.factory = factory
        self.deliveries = DeliveryWorker(settings, factory, mail, keyring_of(settings))
        self.ticker: ScheduleTicker | None = None

    def start_deliveries(self) -> None:
        """Send alert deliveries as they fall due."""
        if self.settings.JOBS_SCHEDULER:
            self.deliveries.start()

    def start_schedules(self, fire: Fire) -> None:
        """Fire due schedules through `fire(job_id, scheduled_for)`: the jobs' way to start
        a scheduled run, keyed by (job_id, scheduled_for) so that a tick taken up again
        after a replica died starts no second run."""
        if self.settings.JOBS_SCHEDULER:
            self.ticker = ScheduleTicker(
                self.factory,
                fire,
                interval=self.settings.JOBS_TICK_SECONDS,
                lease_seconds=self.settings.JOBS_LEASE_SECONDS,
            )
            self.ticker.start()

    async def stop(self) -> None:
        await self.deliveries.stop()
        if self.ticker is not None:
            await self.ticker.stop()

"""Reading a run's events: from its live log while it lives, else from the database.

The one place that decides which, for a new question's stream and for a client that
re-attaches (GET /runs/{id}/events).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator

from redis.exceptions import RedisError

from app.infra.events import RunEvent, RunEventLog
from app.runs.repository import RunRepository
from app.runs.state import ACTIVE, WAITING

log = logging.getLogger(__name__)

# While the live log (Redis) is down, streams read a run's events from the database.
STORED_POLL_SECONDS = 1.0


class RunReader:
    def __init__(self, events: RunEventLog, repository: RunRepository):
        self.events = events
        self.repository = repository

    async def read(
        self, run_id: uuid.UUID, status: str, after: int
    ) -> tuple[list[RunEvent], AsyncIterator[RunEvent | None] | None]:
        """The run's events after `after`: those to replay (an ended run's, read now), and
        those to follow (a run that lives, or waits for the user), until run.finished."""
        try:
            # A run that waits for the user is followed even if its live log is gone.
            live = status in WAITING or await self.events.exists(str(run_id))
        except RedisError:  # followed from the database meanwhile (see follow)
            live = status in ACTIVE
        if live:
            return [], self.follow(run_id, after)
        return await self.repository.stored_events(run_id, after), None

    async def follow(self, run_id: uuid.UUID, after: int) -> AsyncIterator[RunEvent | None]:
        """The run's events after `after` as they come, until run.finished (None: nothing new
        for a while, a heartbeat). From the live log; while that cannot be reached, from the
        database, where runs write their events meanwhile (see EventRecorder)."""
        last = after
        try:
            if not await self.events.exists(str(run_id)):
                # A run that waits outlived the live log it started with (an in-process log
                # after a restart): what was stored comes first, then what comes live.
                for event in await self.repository.stored_events(run_id, last):
                    last = event.seq
                    yield event
                    if event.event == "run.finished":
                        return
            async for live in self.events.follow(str(run_id), last):
                if live is not None:
                    last = live.seq
                yield live
            return
        except Exception as exc:  # Redis is gone (the in-process log cannot fail)
            log.warning(
                "run %s: the live event log failed (%r); following the database", run_id, exc
            )
        while True:
            for event in await self.repository.stored_events(run_id, last):
                last = event.seq
                yield event
                if event.event == "run.finished":
                    return
            yield None
            await asyncio.sleep(STORED_POLL_SECONDS)

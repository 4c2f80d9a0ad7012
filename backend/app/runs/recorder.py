"""A run's events, numbered 1, 2, 3…: to the live log at once, to the database in batches.

When the live log (Redis) cannot be reached, each event goes to the database at once
instead, where streams that follow the run find it (`RunReader`). Events that
could not be stored stay pending until a later flush succeeds.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from app.infra.events import RunEvent, RunEventLog
from app.models.base import utcnow
from app.runs.events import EventData, record
from app.runs.repository import RunRepository

log = logging.getLogger(__name__)
FLUSH_EVERY = 200


class EventRecorder:
    def __init__(
        self,
        run_id: uuid.UUID,
        log: RunEventLog,
        repository: RunRepository,
        last_seq: int = 0,
    ):
        """`last_seq`: the run's last event so far (a run that waited goes on from there)."""
        self.run_id = run_id
        self._log = log
        self._repository = repository
        self._seq = last_seq
        self._pending: list[tuple[RunEvent, datetime]] = []
        self.live_log_down = False
        self.live_log_error: Exception | None = None  # the first failure of the live log

    async def emit(self, payload: EventData) -> RunEvent:
        event = self.prepare(payload)
        await self.publish(event)
        if self.live_log_down or len(self._pending) >= FLUSH_EVERY:
            await self.flush()
        return event

    def prepare(self, payload: EventData) -> RunEvent:
        """Number the next event and keep it to store, without sending it live yet (the
        last event is stored first: whoever acts on it finds the run's events stored)."""
        self._seq += 1
        event = record(self.run_id, self._seq, payload)
        self._pending.append((event, utcnow()))
        return event

    async def publish(self, event: RunEvent) -> None:
        """Send a prepared event to the live log (or note that the live log is down)."""
        try:
            await self._log.append(str(self.run_id), event)
        except Exception as exc:
            if not self.live_log_down:
                log.warning(
                    "run %s: the live event log failed (%r); events go to the database",
                    self.run_id,
                    exc,
                )
            self.live_log_down = True
            self.live_log_error = self.live_log_error or exc

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def flush(self) -> None:
        """Store the pending events; they stay pending if the database fails."""
        batch = list(self._pending)
        if not batch:
            return
        await self._repository.add_events(self.run_id, batch)
        del self._pending[: len(batch)]

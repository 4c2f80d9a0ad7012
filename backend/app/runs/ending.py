"""Ending runs that no replica runs: those that wait for the user (stopped, timed out, or
their session deleted) and those whose replica died. Their row is ended and their
run.finished stored in one unit of work, then sent to whoever follows them live."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime

from app.infra.events import RunEvent, RunEventLog
from app.models import Run, RunStatus
from app.runs.execution import LOG_RETENTION_SECONDS
from app.runs.repository import RunRepository


class RunEnding:
    def __init__(self, events: RunEventLog, repository: RunRepository):
        self.events = events
        self.repository = repository

    async def end_waiting(
        self,
        run_id: uuid.UUID,
        status: RunStatus,
        error: str,
        since_before: datetime | None = None,
    ) -> bool:
        """End a run that waits for the user (since before `since_before`, if given), unless
        an answer took it first. Whether it ended here."""
        event = await self.repository.end_waiting(
            run_id, status, error, self._last_logged, since_before
        )
        if event is None:
            return False
        await self._publish(run_id, event)
        return True

    async def fail_orphans(
        self, run_ids: list[uuid.UUID], error: str, orphaned: Callable[[Run], Awaitable[bool]]
    ) -> int:
        """Fail those of the runs still running that are still `orphaned`; how many."""
        ended = await self.repository.fail_orphans(run_ids, error, orphaned, self._last_logged)
        for run, event in ended:
            await self._publish(run.id, event)
        return len(ended)

    async def _publish(self, run_id: uuid.UUID, event: RunEvent) -> None:
        """Streams that follow the run live (from any replica) end with this event."""
        if await self.events.exists(str(run_id)):
            await self.events.append(str(run_id), event)
            await self.events.expire(str(run_id), LOG_RETENTION_SECONDS)

    async def _last_logged(self, run_id: uuid.UUID) -> int:
        """The highest seq in the run's live log (events not yet flushed to the database)."""
        events = await self.events.read(str(run_id), 0)
        return events[-1].seq if events else 0

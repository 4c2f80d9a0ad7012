"""A run's events, numbered 1, 2, 3…: to the live log at once, to the database in batches."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.infra.events import RunEvent, RunEventLog
from app.models import RunEventRow
from app.models.base import utcnow

FLUSH_EVERY = 200


class EventRecorder:
    def __init__(
        self, run_id: uuid.UUID, log: RunEventLog, factory: async_sessionmaker[AsyncSession]
    ):
        self.run_id = run_id
        self._log = log
        self._factory = factory
        self._seq = 0
        self._pending: list[RunEventRow] = []

    async def emit(self, event: str, **data: Any) -> RunEvent:
        self._seq += 1
        record = RunEvent(self._seq, event, {"run_id": str(self.run_id), "seq": self._seq, **data})
        await self._log.append(str(self.run_id), record)
        self._pending.append(
            RunEventRow(
                run_id=self.run_id,
                seq=record.seq,
                event=event,
                data=record.data,
                created_at=utcnow(),
            )
        )
        if len(self._pending) >= FLUSH_EVERY:
            await self.flush()
        return record

    async def flush(self) -> None:
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        async with self._factory() as db:
            db.add_all(rows)
            await db.commit()

"""One sandbox worker per live session, started on demand and reaped when idle."""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
import uuid
from pathlib import Path

from app.config import Settings
from app.sandbox import SandboxLimits, SandboxWorker

log = logging.getLogger(__name__)
REAP_EVERY_SECONDS = 60.0


class SandboxPool:
    def __init__(self, settings: Settings):
        self.limits = SandboxLimits(
            memory_mb=settings.SANDBOX_MEMORY_MB,
            step_timeout_seconds=settings.SANDBOX_STEP_TIMEOUT_SECONDS,
            idle_seconds=settings.SANDBOX_IDLE_SECONDS,
        )
        self._workers: dict[uuid.UUID, SandboxWorker] = {}
        self._busy: set[uuid.UUID] = set()
        self._reaper: asyncio.Task[None] | None = None

    def start_reaper(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())

    async def acquire(self, session_id: uuid.UUID, workspace: Path) -> SandboxWorker:
        """The session's worker, started if needed (off the event loop). Pair with release()."""
        worker = self._workers.get(session_id)
        if worker is None:
            worker = SandboxWorker(workspace, limits=self.limits)
            self._workers[session_id] = worker
        self._busy.add(session_id)
        if not worker.alive:
            await asyncio.to_thread(worker.start)
        return worker

    def release(self, session_id: uuid.UUID) -> None:
        self._busy.discard(session_id)

    async def discard(self, session_id: uuid.UUID, workspace: Path | None = None) -> None:
        """Stop the session's worker and remove its workspace (the session was deleted)."""
        worker = self._workers.pop(session_id, None)
        if worker is not None:
            await asyncio.to_thread(worker.close)
        if workspace is not None:
            await asyncio.to_thread(shutil.rmtree, workspace, True)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(REAP_EVERY_SECONDS)
            await self.reap()

    async def reap(self) -> None:
        now = time.monotonic()
        for session_id, worker in list(self._workers.items()):
            if session_id in self._busy or now - worker.last_used < self.limits.idle_seconds:
                continue
            log.info("stopping the idle sandbox of session %s", session_id)
            self._workers.pop(session_id, None)
            await asyncio.to_thread(worker.close)

    async def stop_all(self) -> None:
        workers, self._workers = list(self._workers.values()), {}
        await asyncio.gather(*(asyncio.to_thread(w.close) for w in workers))

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        await self.stop_all()

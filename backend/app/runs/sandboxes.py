"""One sandbox worker per live session, started on demand and reaped when idle."""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
import uuid
from pathlib import Path

from app.config import Settings
from app.runs.workspace import manifest_path, workspace_dir
from app.sandbox import (
    LocalLauncher,
    SandboxLimits,
    SandboxStatus,
    SandboxWorker,
    ServiceLauncher,
    WorkerLauncher,
    prepare_sandbox,
)

log = logging.getLogger(__name__)
REAP_EVERY_SECONDS = 60.0


def create_launcher(settings: Settings) -> WorkerLauncher:
    """The sandbox service when SANDBOX_SERVICE_SOCKET is set, else workers of our own."""
    if settings.SANDBOX_SERVICE_SOCKET is not None:
        return ServiceLauncher(settings.SANDBOX_SERVICE_SOCKET)
    return LocalLauncher(settings.SANDBOX_ISOLATION.value, settings.SANDBOX_BWRAP)


class SandboxPool:
    def __init__(self, settings: Settings, launcher: WorkerLauncher | None = None):
        self.settings = settings
        self.launcher = launcher or create_launcher(settings)
        self.limits = SandboxLimits(
            memory_mb=settings.SANDBOX_MEMORY_MB,
            step_timeout_seconds=settings.SANDBOX_STEP_TIMEOUT_SECONDS,
            idle_seconds=settings.SANDBOX_IDLE_SECONDS,
            disk_mb=settings.SANDBOX_DISK_MB,
        )
        self._workers: dict[uuid.UUID, SandboxWorker] = {}
        self._busy: set[uuid.UUID] = set()
        self._reaper: asyncio.Task[None] | None = None

    async def prepare(self) -> SandboxStatus:
        """Probe the isolation and build the runtime cache (slow only the first time)."""
        await asyncio.to_thread(prepare_sandbox, self.launcher)
        return await self.status()

    async def status(self) -> SandboxStatus:
        """Whether and how analysis code can run now (cheap: probed once, or cached briefly)."""
        return await asyncio.to_thread(self.launcher.status)

    def start_reaper(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())

    async def acquire(self, session_id: uuid.UUID, workspace: Path) -> SandboxWorker:
        """The session's worker, started if needed (off the event loop). Pair with release()."""
        worker = self._workers.get(session_id)
        if worker is None:
            worker = SandboxWorker(workspace, launcher=self.launcher, limits=self.limits)
            self._workers[session_id] = worker
        self._busy.add(session_id)
        if not worker.alive:
            await asyncio.to_thread(worker.start)
        return worker

    def release(self, session_id: uuid.UUID) -> None:
        self._busy.discard(session_id)

    async def discard(self, session_id: uuid.UUID) -> None:
        """Stop the session's worker and remove its workspace (the session was deleted)."""
        worker = self._workers.pop(session_id, None)
        if worker is not None:
            await asyncio.to_thread(worker.close)
        data_dir = self.settings.DATA_DIR
        await asyncio.to_thread(shutil.rmtree, workspace_dir(data_dir, session_id), True)
        await asyncio.to_thread(manifest_path(data_dir, session_id).unlink, True)

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

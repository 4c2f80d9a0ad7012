"""A bounded pool of sandbox workers, one per live session, shared fairly between users.

At most `SANDBOX_MAX_WORKERS` workers live at once (a worker may use up to
`SANDBOX_MEMORY_MB`, so the bound is what keeps the machine's memory safe). A run asks for
a *slot* before it starts: a session that has a worker takes it; otherwise a free slot, or
the slot of the least recently used idle worker (which is stopped first). When every
worker is busy the run waits in a queue. The queue is fair between users: the next slot
goes to the user with the fewest busy workers (then to whoever waited longest), so one
user's fifty sessions cannot starve another user's one.

Spare workers (`SANDBOX_SPARE_WORKERS`) are started ahead of need into free room, with an
empty folder of their own as workspace: a session that needs a new worker takes a spare,
whose folder is renamed to the session's (the sandbox follows the folder), so its first
step does not wait seconds for Python and pandas to start. Spares count against the bound;
a run never waits for one, and a queued run gets the room before a new spare does.

Slots are granted synchronously on the event loop (no await between the check and the
grant), so there is nothing to race.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.config import Settings
from app.runs import project_files
from app.runs.workspace import manifest_path, snapshot_marker_path, workspace_dir
from app.sandbox import (
    LocalLauncher,
    SandboxLimits,
    SandboxStatus,
    SandboxWorker,
    ServiceLauncher,
    WorkerLauncher,
    hostfs,
    prepare_sandbox,
)

log = logging.getLogger(__name__)
REAP_EVERY_SECONDS = 60.0
SPARE_PREFIX = "spare-"  # spares' folders in DATA_DIR/workspaces (session folders are ids)
# After a spare failed to start, no other is tried for this long.
SPARE_RETRY_SECONDS = 60.0
# Share of the machine's memory that sandbox workers may take (the default bound).
MEMORY_SHARE = 0.75
MAX_DEFAULT_WORKERS = 64


def create_launcher(settings: Settings) -> WorkerLauncher:
    """The sandbox service when SANDBOX_SERVICE_SOCKET is set, else workers of our own."""
    if settings.SANDBOX_SERVICE_SOCKET is not None:
        return ServiceLauncher(settings.SANDBOX_SERVICE_SOCKET)
    workspaces = settings.DATA_DIR / "workspaces" if settings.SANDBOX_FORK_SERVER else None
    return LocalLauncher(settings.SANDBOX_ISOLATION.value, settings.SANDBOX_BWRAP, workspaces)


def available_memory_mb() -> int | None:
    """The memory this process may use: the machine's, or its cgroup's limit if lower."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if raw.isdigit():
            total = min(total, int(raw))
        break
    return total // (1024 * 1024)


def default_max_workers(memory_mb_per_worker: int) -> int:
    """As many workers as fit in three quarters of the memory at their limit (at least 2)."""
    memory = available_memory_mb()
    if memory is None:
        return 4
    fits = int(memory * MEMORY_SHARE) // memory_mb_per_worker
    return max(2, min(MAX_DEFAULT_WORKERS, fits))


@dataclass(eq=False)
class SlotTicket:
    """A run's claim on a worker slot: granted at once, or queued until one frees up."""

    session_id: uuid.UUID
    user_id: uuid.UUID
    order: int
    granted: asyncio.Event = field(default_factory=asyncio.Event)
    # 1 for the next in line; 0 once granted.
    position: int = 0
    # A worker being stopped to make room; its slot is ours once it has stopped.
    evicting: asyncio.Task[None] | None = None

    async def wait(self, seconds: float) -> bool:
        """Whether the slot is granted, waiting at most this long for it."""
        try:
            await asyncio.wait_for(self.granted.wait(), seconds)
        except TimeoutError:
            return False
        return True


class SandboxPool:
    def __init__(self, settings: Settings, launcher: WorkerLauncher | None = None):
        self.settings = settings
        self.launcher = launcher or create_launcher(settings)
        self.limits = SandboxLimits(
            memory_mb=settings.SANDBOX_MEMORY_MB,
            step_timeout_seconds=settings.SANDBOX_STEP_TIMEOUT_SECONDS,
            idle_seconds=settings.SANDBOX_IDLE_SECONDS,
            disk_mb=settings.SANDBOX_DISK_MB,
            artifact_mb=settings.SANDBOX_ARTIFACTS_MB,
        )
        # The bound is the whole backend's, shared out between its processes (WEB_CONCURRENCY).
        bound = settings.SANDBOX_MAX_WORKERS or default_max_workers(settings.SANDBOX_MEMORY_MB)
        self.max_workers = max(1, bound // settings.web_processes)
        self._workers: dict[uuid.UUID, SandboxWorker] = {}
        # Started workers no session has taken yet, and how many are starting.
        self._spares: list[SandboxWorker] = []
        self._spares_starting = 0
        self._spares_wanted = 0  # set once the sandbox is known to work
        self._spare_retry_at = 0.0
        self._busy: dict[uuid.UUID, uuid.UUID] = {}  # session → its user
        self._stopping = 0  # evicted workers not yet stopped (they still hold memory)
        self._borrowed = 0  # runs' extra workers (repair strategies: app.runs.repair_workers)
        self._queue: list[SlotTicket] = []
        self._order = itertools.count()
        self._reaper: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def prepare(self) -> SandboxStatus:
        """Probe the isolation and build the runtime cache (slow only the first time)."""
        await asyncio.to_thread(prepare_sandbox, self.launcher)
        status = await self.status()
        if status.available:
            await self.keep_spares(self.settings.SANDBOX_SPARE_WORKERS)
        return status

    async def keep_spares(self, count: int) -> None:
        """Keep this many spare workers from now on (started in the background)."""
        self._spares_wanted = count
        extra, self._spares = self._spares[count:], self._spares[:count]
        await asyncio.gather(*(asyncio.to_thread(_close_worker, w) for w in extra))
        self._replenish()

    async def status(self) -> SandboxStatus:
        """Whether and how analysis code can run now (cheap: probed once, or cached briefly)."""
        return await asyncio.to_thread(self.launcher.status)

    def start_reaper(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())

    # Slots ----------------------------------------------------------------------------
    def claim(self, session_id: uuid.UUID, user_id: uuid.UUID) -> SlotTicket:
        """Claim a slot for the session's next run: granted now, or queued (see position)."""
        if session_id in self._busy:
            raise RuntimeError(f"session {session_id} already holds a sandbox slot")
        ticket = SlotTicket(session_id, user_id, next(self._order))
        if not self._queue and self._try_grant(ticket):
            self._replenish()  # it may have taken a spare
            return ticket
        self._queue.append(ticket)
        self._dispatch()
        return ticket

    def withdraw(self, ticket: SlotTicket) -> None:
        """Give up a queued ticket (the run was cancelled before it got a worker)."""
        if ticket in self._queue:
            self._queue.remove(ticket)
            self._renumber()

    def release(self, session_id: uuid.UUID) -> None:
        """The session's run ended: its worker stays warm but may now be evicted."""
        if self._busy.pop(session_id, None) is not None:
            self._dispatch()

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def busy(self) -> int:
        return len(self._busy)

    @property
    def live(self) -> int:
        """Workers of sessions, spares not included."""
        return len(self._workers)

    @property
    def spares(self) -> int:
        """Spare workers ready to be taken."""
        return len(self._spares)

    @property
    def _room_used(self) -> int:
        used = len(self._workers) + self._stopping + len(self._spares) + self._spares_starting
        return used + self._borrowed

    def borrow(self, count: int) -> tuple[int, list[asyncio.Task[None]]]:
        """Take up to `count` slots for a run's extra workers: free room, then the room of
        idle workers (stopped for it, least recently used first), never a queued run's.

        Returns:
            How many were taken, and the stops of idle workers to await before starting.
        """
        stops: list[asyncio.Task[None]] = []
        taken = 0
        while taken < count and not self._queue:
            if self._room_used >= self.max_workers:
                victim = self._least_recently_used_idle()
                if victim is None:
                    break
                log.info("stopping the sandbox of session %s: a repair needs its slot", victim)
                stops.append(self._evict(victim))
            self._borrowed += 1
            taken += 1
        return taken, stops

    def give_back(self, count: int) -> None:
        """The extra workers of `borrow` stopped: their room is free again."""
        self._borrowed = max(0, self._borrowed - count)
        self._dispatch()

    def _try_grant(self, ticket: SlotTicket) -> bool:
        session_id = ticket.session_id
        if session_id not in self._workers:
            if self._spares:
                # acquire() moves it into the session's workspace.
                self._workers[session_id] = self._spares.pop()
            else:
                if self._room_used >= self.max_workers:
                    victim = self._least_recently_used_idle()
                    if victim is None:
                        return False
                    log.info("stopping the sandbox of session %s: its slot is needed", victim)
                    ticket.evicting = self._evict(victim)
                self._workers[session_id] = SandboxWorker(
                    workspace_dir(self.settings.DATA_DIR, session_id),
                    launcher=self.launcher,
                    limits=self.limits,
                )
        self._busy[session_id] = ticket.user_id
        ticket.position = 0
        ticket.granted.set()
        return True

    def _least_recently_used_idle(self) -> uuid.UUID | None:
        idle = [(w.last_used, s) for s, w in self._workers.items() if s not in self._busy]
        return min(idle)[1] if idle else None

    def _evict(self, session_id: uuid.UUID) -> asyncio.Task[None]:
        """Stop an idle worker; until it has stopped it still counts against the bound."""
        worker = self._workers.pop(session_id)
        self._stopping += 1

        async def stop() -> None:
            try:
                await asyncio.to_thread(_close_worker, worker)
            finally:
                self._stopping -= 1
                self._replenish()

        return self._spawn(stop())

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _dispatch(self) -> None:
        """Grant slots to queued tickets, fairest first, while any can be had."""
        # The fair order already counts each grant it makes, so one pass serves them all.
        for ticket in self._fair_order():
            if not self._try_grant(ticket):
                break
            self._queue.remove(ticket)
        self._renumber()
        self._replenish()

    def _fair_order(self) -> list[SlotTicket]:
        """The queue in the order slots will go: fewest busy workers per user first."""
        load = Counter(self._busy.values())
        pending: dict[uuid.UUID, list[SlotTicket]] = {}
        for ticket in sorted(self._queue, key=lambda t: t.order):
            pending.setdefault(ticket.user_id, []).append(ticket)
        order: list[SlotTicket] = []
        while pending:
            user = min(pending, key=lambda u: (load[u], pending[u][0].order))
            order.append(pending[user].pop(0))
            load[user] += 1
            if not pending[user]:
                del pending[user]
        return order

    def _renumber(self) -> None:
        for position, ticket in enumerate(self._fair_order(), start=1):
            ticket.position = position

    # Spares ---------------------------------------------------------------------------
    def _replenish(self) -> None:
        """Start spares into free room, up to SANDBOX_SPARE_WORKERS (queued runs first)."""
        while (
            len(self._spares) + self._spares_starting < self._spares_wanted
            and self._room_used < self.max_workers
            and not self._queue
            and time.monotonic() >= self._spare_retry_at
        ):
            self._spares_starting += 1
            self._spawn(self._start_spare())

    async def _start_spare(self) -> None:
        folder = (
            self.settings.DATA_DIR / "workspaces" / f"{SPARE_PREFIX}{uuid.uuid4().hex}"
        ).resolve()
        worker = SandboxWorker(folder, launcher=self.launcher, limits=self.limits)
        try:
            await asyncio.to_thread(worker.start)
        except Exception as exc:
            log.warning(
                "a spare sandbox worker did not start (%s); next try in %.0f s",
                exc,
                SPARE_RETRY_SECONDS,
            )
            self._spare_retry_at = time.monotonic() + SPARE_RETRY_SECONDS
            await asyncio.to_thread(_close_worker, worker)
            return
        finally:
            self._spares_starting -= 1
        if len(self._spares) >= self._spares_wanted:  # fewer wanted now, or closing
            await asyncio.to_thread(_close_worker, worker)
            return
        self._spares.append(worker)
        self._dispatch()

    # Workers --------------------------------------------------------------------------
    async def acquire(
        self,
        ticket: SlotTicket,
        snapshot_generation: str | None = None,
        on_start: Callable[[], Awaitable[object]] | None = None,
        given_bytes: int = 0,
    ) -> tuple[SandboxWorker, bool]:
        """The session's worker for a granted ticket, started if needed (off the event loop).

        Args:
            ticket: The run's granted ticket.
            snapshot_generation: The session's stored snapshot. A live worker whose variables
                are older (another replica ran the session since) is replaced by a new one,
                which restores that snapshot.
            on_start: Awaited just before a worker has to be started (it takes seconds).
            given_bytes: The bytes of the project's files copied into the workspace, not
                charged to its quota (`SandboxWorker.given_bytes`): set before the worker
                starts, for restoring the snapshot beside a file bigger than the quota is
                measured against the quota too.

        Returns:
            The worker, and whether it was started now (its variables come from the
            snapshot, if any; see `SandboxWorker.take_restore_report`).
        """
        assert ticket.granted.is_set(), "acquire() needs a granted slot"
        if ticket.evicting is not None:
            await asyncio.shield(ticket.evicting)  # its memory is ours only once it stopped
        worker = self._workers[ticket.session_id]
        worker.given_bytes = given_bytes
        workspace = workspace_dir(self.settings.DATA_DIR, ticket.session_id)
        if worker.workspace != workspace:  # a spare: it becomes the session's worker
            if on_start is not None and snapshot_generation is not None:
                await on_start()  # restoring the variables takes a while
                on_start = None
            worker = await self._take_spare(ticket.session_id, worker, workspace)
            worker.given_bytes = given_bytes
            if worker.alive:
                worker.snapshot_generation = snapshot_generation
                return worker, True
        if worker.alive and worker.snapshot_generation != snapshot_generation:
            log.info("restarting the sandbox of session %s: it moved", ticket.session_id)
            await asyncio.to_thread(worker.close)
        if worker.alive:
            return worker, False
        if on_start is not None:
            await on_start()
        await asyncio.to_thread(worker.start)
        worker.snapshot_generation = snapshot_generation
        return worker, True

    async def _take_spare(
        self, session_id: uuid.UUID, spare: SandboxWorker, workspace: Path
    ) -> SandboxWorker:
        """The spare, moved into the session's workspace; or, if that failed, a new worker
        (not started) for the workspace in its place."""
        try:
            # Its sandbox has its own (empty) folder of project files bound: the session's
            # files move in there, as the session's workspace moves into its folder.
            await asyncio.to_thread(project_files.hand_over, spare.workspace, workspace)
            await asyncio.to_thread(spare.take_over, workspace)
            return spare
        except Exception as exc:
            log.warning("could not hand a spare sandbox to session %s: %s", session_id, exc)
            await asyncio.to_thread(_close_worker, spare)
        worker = SandboxWorker(workspace, launcher=self.launcher, limits=self.limits)
        self._workers[session_id] = worker
        return worker

    async def discard(self, session_id: uuid.UUID) -> None:
        """Stop the session's worker and remove its workspace (the session was deleted)."""
        worker = self._workers.pop(session_id, None)
        if worker is not None:
            await asyncio.to_thread(_close_worker, worker)
            self._dispatch()
        data_dir = self.settings.DATA_DIR
        await asyncio.to_thread(manifest_path(data_dir, session_id).unlink, True)
        await asyncio.to_thread(snapshot_marker_path(data_dir, session_id).unlink, True)
        # The code wrote the workspace: a tree of any depth, folders it made unreadable.
        # What cannot be removed raises (and is logged) rather than stay unnoticed.
        await asyncio.to_thread(hostfs.remove_tree, workspace_dir(data_dir, session_id))
        await asyncio.to_thread(project_files.forget, workspace_dir(data_dir, session_id))

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(REAP_EVERY_SECONDS)
            await self.reap()

    async def reap(self) -> None:
        now = time.monotonic()
        for session_id, worker in list(self._workers.items()):
            if session_id in self._busy or now - worker.last_used < self.limits.idle_seconds:
                continue
            log.info("stopping the sandbox of session %s: idle", session_id)
            await self._evict(session_id)
        self._dispatch()

    async def stop_all(self) -> None:
        """Stop every worker, spares included (more spares start as wanted)."""
        workers = [*self._workers.values(), *self._spares]
        self._workers, self._spares = {}, []
        await asyncio.gather(*(asyncio.to_thread(_close_worker, w) for w in workers))
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        self._spares_wanted = 0
        await self.stop_all()
        await asyncio.to_thread(self.launcher.close)


def _close_worker(worker: SandboxWorker) -> None:
    """Stop a worker; a spare's folder goes too (a session's stays)."""
    worker.close()
    if worker.workspace.name.startswith(SPARE_PREFIX):  # no code ran there: it is empty
        project_files.forget(worker.workspace)
        try:
            hostfs.remove_tree(worker.workspace)
        except OSError as exc:
            log.warning("could not remove the spare sandbox folder %s: %s", worker.workspace, exc)

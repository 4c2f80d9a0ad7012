"""The backend's side of one sandbox worker's process: starting it (or making a started
spare another workspace's), restoring the session's snapshot into it, the exchange of a
request and its reply while the workspace is measured against the disk quota, its
variables, and stopping it. What the steps it runs make of it is client.py's.

The worker itself may be a child of this process or run by the sandbox service; the
`WorkerLauncher` hides which. What the worker reports is not trusted: the workspace's disk
quota is measured here, not inside.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

from app.observability import metrics
from app.sandbox import hostfs, replies
from app.sandbox.asks import Asks
from app.sandbox.forkserver import ForkedChannel
from app.sandbox.interface import DEFAULT_AUTHORIZED_IMPORTS, SandboxLimits
from app.sandbox.layout import SPILL_DIR
from app.sandbox.protocol import ASKS, Message
from app.sandbox.snapshot_format import MANIFEST, SNAPSHOT_DIR, RestoreReport
from app.sandbox.spawn import LocalLauncher, SandboxUnavailable, WorkerLauncher
from app.sandbox.transport import SocketChannel, WorkerChannel

logger = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 120.0
REQUEST_TIMEOUT_SECONDS = 30.0
SHUTDOWN_GRACE_SECONDS = 2.0
# How often a running step's workspace is measured against the disk quota.
QUOTA_POLL_SECONDS = 0.25


class SandboxError(RuntimeError):
    """The sandbox could not be used at all (for example the worker failed to start)."""


class WorkerConnection:
    """One isolated worker's process and the requests to it (see module); SandboxWorker
    (client.py) runs the session's steps in it.

    Thread-safety: run(), start(), close() and set_variables() are serialised; kill() may be
    called from any thread at any time to stop a running step.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        launcher: WorkerLauncher | None = None,
        limits: SandboxLimits = SandboxLimits(),
        authorized_imports: Sequence[str] = DEFAULT_AUTHORIZED_IMPORTS,
    ) -> None:
        """Describe a worker; nothing is started until start() or run().

        Args:
            workspace: Host folder with the session's files; the code's working directory.
            launcher: Where the worker comes from (default: this process, bubblewrap required).
            limits: Resource limits.
            authorized_imports: Modules the code may import (smolagents' syntax, "x.*").
        """
        self.workspace = Path(workspace).resolve()
        self.launcher: WorkerLauncher = launcher or LocalLauncher()
        self.limits = limits
        self.authorized_imports = tuple(authorized_imports)
        self.isolation = ""
        self.last_used = time.monotonic()
        self._variables: dict[str, Any] = {}
        self._channel: WorkerChannel | None = None
        self._stop_requested = False
        self._stderr = ""  # the last worker's stderr (start-up errors, crashes)
        self._restore: RestoreReport | None = None  # what the last start restored, unread
        self._ran_code = False  # a worker that ran code never serves another workspace
        # What the session may still keep of artifacts, in bytes (None: no session limit);
        # the backend sets it before a run, each step's kept artifacts are taken off it.
        self.artifact_budget: int | None = None
        # The names of the project's files in the workspace: the steps' results say which of
        # them the code read (None: say every name read, up to MAX_READS).
        self.project_files: tuple[str, ...] | None = None
        # The bytes of the project's files copied into the workspace: given, not written by
        # the code, so they do not count against the quota (the backend sets it before a
        # run); a 5 GB file leaves the quota whole for what the code writes.
        self.given_bytes = 0
        # The stored snapshot its variables match (the backend's bookkeeping).
        self.snapshot_generation: str | None = None
        self._lock = threading.RLock()  # serialises requests
        self._state_lock = threading.Lock()  # guards _channel/_stop_requested for kill()

    @property
    def alive(self) -> bool:
        """Whether the worker is running."""
        channel = self._channel
        return channel is not None and channel.alive()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the worker, wait until it has imported its libraries, and restore the
        session's snapshot if the workspace has one (see take_restore_report). Blocking.

        Raises:
            SandboxUnavailable: No sandbox can be created here (the status says why).
            SandboxError: The worker did not start.
        """
        with self._lock:
            if self.alive:
                return
            self._launch()
            self._restore_snapshot()

    def take_over(self, workspace: Path) -> None:
        """Make this started, unused worker (a spare) the worker of another workspace.

        The worker's own folder (bound into its sandbox, still empty) takes the workspace's
        name, with the workspace's files moved into it; the sandbox follows the folder, not
        its name. Then the session's snapshot, if the workspace has one, is restored.
        Blocking.

        Args:
            workspace: The session's workspace (its files are there; it may not exist yet).

        Raises:
            SandboxError: The worker is not running, or has run code (it is not a spare).
            OSError: The folders could not be moved; the worker should be closed.
        """
        workspace = Path(workspace).resolve()
        with self._lock:
            if not self.alive:
                raise SandboxError("the spare sandbox worker is not running")
            if self._ran_code or self._variables:
                raise SandboxError("only an unused sandbox worker can change its workspace")
            if os.listdir(self.workspace):
                raise SandboxError("the spare sandbox worker's folder is not empty")
            workspace.parent.mkdir(parents=True, exist_ok=True)
            existed = workspace.exists()
            try:
                if existed:
                    hostfs.move_entries(workspace, self.workspace)
                    workspace.rmdir()
                os.rename(self.workspace, workspace)
            except OSError:
                if existed:  # the session's files go back where they were
                    workspace.mkdir(exist_ok=True)
                    hostfs.move_entries(self.workspace, workspace)
                raise
            self.workspace = workspace
            self.last_used = time.monotonic()
            self._restore_snapshot()

    def _restore_snapshot(self) -> None:
        """Have a new worker load the workspace's snapshot, if there is one."""
        with self._lock:
            if not self.has_snapshot:
                self._restore = None
                return
            with metrics.SNAPSHOT_SECONDS.labels("restore").time():
                reply = self._request({"type": "restore"}, START_TIMEOUT_SECONDS, measure=True)
            try:
                self._restore = RestoreReport.from_message(reply) if reply else None
            except (ValueError, KeyError, TypeError):
                self._restore = RestoreReport(error="the saved variables are damaged")
            if reply is None:  # it died loading them: start afresh, without them
                self._terminate()
                self._launch()
                self._restore = RestoreReport(
                    error="the sandbox stopped while loading them, most likely out of memory"
                )

    @property
    def has_snapshot(self) -> bool:
        """Whether the workspace holds a snapshot of the session's variables."""
        return os.path.lexists(self.workspace / SNAPSHOT_DIR / MANIFEST)

    def take_restore_report(self) -> RestoreReport | None:
        """What the last start restored from the snapshot, once (None: nothing to tell)."""
        report, self._restore = self._restore, None
        return report

    def _launch(self) -> None:
        with self._lock, metrics.worker_starting():
            self._terminate()
            self.workspace.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            try:
                channel = self.launcher.launch(self.workspace, self.limits)
            except SandboxUnavailable:
                raise
            except OSError as exc:
                raise SandboxError(f"The sandbox worker could not be started: {exc}") from exc
            with self._state_lock:
                self._channel = channel
            self.isolation = channel.mechanism
            seccomp = self.launcher.seccomp_filter()
            configure: Message = {
                "type": "configure",
                "authorized_imports": list(self.authorized_imports),
                "output_chars": self.limits.output_chars,
                "memory_mb": self.limits.memory_mb,
                "process_memory_mb": self.limits.process_memory_mb,
                "cpu_seconds": self.limits.cpu_seconds,
                "file_size_mb": min(self.limits.file_size_mb, self.limits.disk_mb),
                "disk_mb": self.limits.disk_mb,
                "max_processes": self.limits.max_processes,
                "max_artifacts": self.limits.max_artifacts,
                "own_user_namespace": channel.own_user_namespace,
                "seccomp": seccomp.to_config() if seccomp else None,
            }
            reply = self._request(configure, START_TIMEOUT_SECONDS)
            if reply is None or reply.get("type") != "ready":
                detail = str(reply.get("error")) if reply else ""
                self._terminate()
                detail = detail or self._stderr or "no message"
                raise SandboxError(f"The sandbox worker did not start: {detail.strip()}")
            logger.debug("Sandbox worker ready in %s ms", reply.get("startup_ms"))
            metrics.WORKER_START.labels(_start_mode(channel)).observe(time.perf_counter() - started)
            if self._variables:
                self._send_variables(self._variables)
            self.last_used = time.monotonic()

    def _request(self, message: Message, timeout: float, measure: bool = False) -> Message | None:
        """Send a request and wait for the reply; None if the worker is gone, too slow, or
        (with `measure`, for requests that may run the session's code: a snapshot, a
        restore) went over the disk quota meanwhile (it is stopped then)."""
        started_ns = hostfs.file_clock_ns(self.workspace.parent) if measure else 0
        try:
            reply, over_quota = self._exchange(message, time.monotonic() + timeout, measure)
        except TimeoutError:
            return None
        if over_quota:
            freed = hostfs.remove_newer_than(self.workspace, started_ns)
            logger.info(
                "Sandbox: %s over its quota in a request; freed %d bytes", self.workspace, freed
            )
        return reply

    def _exchange(
        self,
        request: Message,
        deadline: float,
        measure: bool = True,
        on_output: Callable[[str], None] | None = None,
        asks: Asks | None = None,
    ) -> tuple[Message | None, bool]:
        """Send a request and wait for its reply; with `measure`, measuring the workspace
        while the worker works: whatever code runs, runs while a request is pending (the
        worker's supervisor stops it in between). Over the quota, the worker is stopped.
        With `asks` (a step), the step's asks for data are answered meanwhile.

        Returns:
            (the reply or None when the worker is gone, whether the disk quota was exceeded).

        Raises:
            TimeoutError: No reply by the deadline (the worker is still running).
        """
        channel = self._channel
        if channel is None:
            return None, False
        try:
            channel.send(request)
        except OSError:
            return None, False
        try:
            return self._await_reply(channel, deadline, measure, on_output, asks)
        finally:
            if asks is not None:
                asks.close()

    def _await_reply(
        self,
        channel: WorkerChannel,
        deadline: float,
        measure: bool,
        on_output: Callable[[str], None] | None,
        asks: Asks | None,
    ) -> tuple[Message | None, bool]:
        streamed = 0
        while True:
            poll = min(deadline, time.monotonic() + QUOTA_POLL_SECONDS) if measure else deadline
            try:
                reply = channel.receive(poll)
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise
                reply = None
            else:
                if reply is None:
                    return None, False
            if measure and self._over_quota():
                self._terminate()
                return None, True
            if reply is not None and reply.get("type") == "output":  # a step's print, early
                streamed += replies.streamed_output(reply, streamed, on_output)
            elif reply is not None and asks is not None and reply.get("type") in ASKS:
                try:
                    channel.send(asks.answer(reply, deadline))
                except OSError:
                    return None, False
            elif reply is not None:
                return reply, False

    def _room(self) -> int:
        """The workspace's free quota in bytes."""
        limit = self._quota_bytes
        return max(0, limit - hostfs.usage(self.workspace, stop_above=limit).bytes)

    def _over_quota(self) -> bool:
        limit = self._quota_bytes
        return hostfs.usage(self.workspace, stop_above=limit).bytes > limit

    @property
    def _quota_bytes(self) -> int:
        """What the workspace may hold: the quota, plus the project's files copied in."""
        return (self.limits.disk_mb << 20) + max(0, self.given_bytes)

    def set_variables(self, variables: dict[str, Any]) -> None:
        """Define variables in the code's namespace, now and after every worker restart.

        Args:
            variables: JSON-serialisable values by name.

        Raises:
            TypeError: A value is not JSON-serialisable (it could not cross the pipe).
        """
        try:
            json.dumps(variables, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"sandbox variables must be JSON-serialisable: {exc}") from exc
        with self._lock:
            self._variables.update(variables)
            if self.alive and variables:
                self._send_variables(variables)

    def _send_variables(self, variables: dict[str, Any]) -> None:
        reply = self._request({"type": "variables", "values": variables}, REQUEST_TIMEOUT_SECONDS)
        if reply is None or reply.get("type") != "ok":
            self._terminate()
            raise SandboxError(f"The sandbox worker did not take the variables: {reply!r}")

    def kill(self) -> None:
        """Stop the worker now; a run() in progress returns "The step was stopped."."""
        with self._state_lock:
            self._stop_requested = True
            channel = self._channel
        if channel is not None:
            channel.kill()
        # Reap here only if no run() is waiting on the worker (it reaps otherwise).
        if self._lock.acquire(blocking=False):
            try:
                self._terminate()
            finally:
                self._lock.release()

    def close(self) -> None:
        """Ask the worker to exit, then make sure it is gone."""
        if not self._lock.acquire(blocking=False):
            self.kill()  # a step is running: stop it
            return
        try:
            channel = self._channel
            if channel is not None and channel.alive():
                try:
                    channel.send({"type": "shutdown"})
                    channel.receive(time.monotonic() + SHUTDOWN_GRACE_SECONDS)
                except OSError:
                    pass
            self._terminate()
        finally:
            self._lock.release()

    def _terminate(self) -> int | None:
        """Stop the worker if needed and release it; returns its exit status if known."""
        with self._state_lock:
            channel, self._channel = self._channel, None
        self._stderr = ""
        if channel is None:
            return None
        ended = channel.reap()
        self._stderr = ended.stderr
        # What DuckDB spilled is of no use once its worker is gone (a timeout or a crash
        # leaves it mid-query); it would count against the quota.
        try:
            hostfs.remove_tree(self.workspace, SPILL_DIR)
        except OSError:
            logger.warning("Sandbox: could not remove %s's spill folder", self.workspace)
        return ended.returncode


def _start_mode(channel: WorkerChannel) -> str:
    """How a worker started, as the `mode` label says it (see WORKER_START)."""
    if isinstance(channel, ForkedChannel):
        return "fork"
    return "service" if isinstance(channel, SocketChannel) else "cold"

"""Where workers come from: started here (`LocalLauncher`) or by the sandbox service.

A launcher answers two questions: can analysis code run, and how is it isolated
(`status()`), and gives a channel to a new worker for a workspace (`launch()`). The
backend uses one or the other depending on SANDBOX_SERVICE_SOCKET; everything after the
launch is the same.
"""

from __future__ import annotations

import functools
import logging
import math
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Protocol

from app.sandbox.forkserver import ForkedChannel, ForkServer, ForkServerError
from app.sandbox.interface import SandboxLimits, SandboxStatus
from app.sandbox.isolation import Isolation, Policy, build_launch
from app.sandbox.layout import WORKSPACE_NAME, files_view
from app.sandbox.probe import probe
from app.sandbox.protocol import FrameReader, Message, ProtocolError, SeccompFilter, write_message
from app.sandbox.runtime_cache import runtime_cache
from app.sandbox.seccomp import SeccompUnavailable, compiled, denied_calls
from app.sandbox.spawner import spawner
from app.sandbox.transport import ProcessChannel, SocketChannel, WorkerChannel

logger = logging.getLogger(__name__)

SERVICE_TIMEOUT_SECONDS = 10.0
# A spawn is answered once the worker's process has started (the service's first also probes
# the sandbox): seconds on a loaded host, where 10 s made a busy CI machine's step fail.
SPAWN_TIMEOUT_SECONDS = 60.0
# After the fork server failed, workers start from scratch for this long.
FORK_SERVER_RETRY_SECONDS = 60.0
STATUS_TTL_SECONDS = 5.0


class SandboxUnavailable(RuntimeError):
    """No sandbox can be created; `status` says why and what to do."""

    def __init__(self, status: SandboxStatus) -> None:
        """Carry the status.

        Args:
            status: The launcher's status (available is False).
        """
        text = status.detail + (f" Fix: {status.fix}." if status.fix else "")
        super().__init__(text)
        self.status = status


class WorkerLauncher(Protocol):
    """Starts workers; see the module docstring."""

    def status(self) -> SandboxStatus:
        """Whether and how analysis code can run (blocking, cheap after the first call)."""

    def seccomp_filter(self) -> SeccompFilter | None:
        """The system-call filter the worker installs, if there is one."""

    def launch(self, workspace: Path, limits: SandboxLimits) -> WorkerChannel:
        """Start a worker for a workspace (blocking). Raises SandboxUnavailable or OSError."""

    def close(self) -> None:
        """Release what the launcher keeps between launches (blocking)."""


class LocalLauncher:
    """Workers as children of this process, isolated by bubblewrap (or limits only)."""

    def __init__(
        self,
        policy: Policy = "required",
        bwrap: str | None = None,
        workspaces: Path | None = None,
    ) -> None:
        """Describe the launcher; the host is probed on first use.

        Args:
            policy: SANDBOX_ISOLATION.
            bwrap: SANDBOX_BWRAP (a system bwrap), or None for the bundled one.
            workspaces: The folder of the sessions' workspaces: workers for folders in it
                are forked by a fork server (bubblewrap only; SANDBOX_FORK_SERVER). None:
                every worker starts from scratch.
        """
        self.policy = policy
        self.bwrap = bwrap
        self.workspaces = workspaces.resolve() if workspaces is not None else None
        self._fork_server: ForkServer | None = None
        self._fork_server_lock = threading.Lock()
        self._fork_server_failed_at: float | None = None

    def isolation(self) -> Isolation:
        """The probe's outcome (cached per process)."""
        return probe(self.policy, self.bwrap)

    def seccomp_filter(self) -> SeccompFilter | None:
        try:
            return compiled()
        except SeccompUnavailable:
            return None

    @functools.cache  # noqa: B019  (one launcher per process; the answer never changes)
    def status(self) -> SandboxStatus:
        isolation = self.isolation()
        try:
            compiled()
            seccomp_error = None
        except SeccompUnavailable as exc:
            seccomp_error = str(exc)
        seccomp = () if seccomp_error else tuple(denied_calls())
        if isolation.mechanism is None:
            return SandboxStatus(
                self.policy, None, "backend", False, False, isolation.detail, isolation.fix
            )
        if isolation.mechanism == "bubblewrap":
            if seccomp_error is not None:
                return SandboxStatus(
                    self.policy,
                    None,
                    "backend",
                    False,
                    False,
                    f"the sandbox's system-call filter is unavailable: {seccomp_error}",
                    "install libseccomp (Debian/Ubuntu: apt-get install libseccomp2), or set "
                    "SANDBOX_ISOLATION=none for a single trusted user",
                )
            detail = f"{isolation.detail}, system-call filter"
            return SandboxStatus(
                self.policy, "bubblewrap", "backend", True, True, detail, None, seccomp
            )
        detail = isolation.detail
        if seccomp_error is not None:
            detail += f" No system-call filter either: {seccomp_error}."
        fix = "set SANDBOX_ISOLATION=required where bubblewrap works (see docs/sandbox.md)"
        return SandboxStatus(self.policy, "rlimits", "backend", True, False, detail, fix, seccomp)

    def launch(self, workspace: Path, limits: SandboxLimits) -> ProcessChannel | ForkedChannel:
        status = self.status()
        if not status.available:
            raise SandboxUnavailable(status)
        folder = workspace.resolve()
        fork_server = self._fork_server_for(folder)
        if fork_server is not None:
            # The forked worker binds this folder read-only (worker/zygote.py): it must be
            # there when the worker starts, to show the files given to it later.
            files_view(folder).mkdir(parents=True, exist_ok=True)
            try:
                return fork_server.spawn(folder, limits.tmpfs_mb)
            except ForkServerError as exc:
                self._fork_server_failed(exc)
        return self._start(workspace, limits)

    def _fork_server_for(self, folder: Path) -> ForkServer | None:
        """The fork server for a (resolved) workspace folder, if its worker is to be forked."""
        if self.workspaces is None or folder.parent != self.workspaces:
            return None
        if self.isolation().mechanism != "bubblewrap":
            return None
        with self._fork_server_lock:
            failed_at = self._fork_server_failed_at
            if failed_at is not None and time.monotonic() - failed_at < FORK_SERVER_RETRY_SECONDS:
                return None
            if self._fork_server is None:
                self._fork_server = ForkServer(self.isolation(), self.workspaces, runtime_cache())
            return self._fork_server

    def _fork_server_failed(self, exc: ForkServerError) -> None:
        if exc.lasting:
            logger.warning(
                "Sandbox: %s. Workers start from scratch instead (seconds each instead of "
                "milliseconds); they are isolated as before.",
                exc,
            )
        else:
            logger.warning(
                "Sandbox: %s. This worker starts from scratch (seconds instead of "
                "milliseconds); the fork server is tried again in %.0f s.",
                exc,
                FORK_SERVER_RETRY_SECONDS,
            )
        with self._fork_server_lock:
            self._fork_server_failed_at = math.inf if exc.lasting else time.monotonic()

    def close(self) -> None:
        """Stop the fork server, if one runs (its workers end with it)."""
        with self._fork_server_lock:
            fork_server, self._fork_server = self._fork_server, None
        if fork_server is not None:
            fork_server.close()

    def _start(self, workspace: Path, limits: SandboxLimits) -> ProcessChannel:
        """A worker started from scratch: bwrap (or the fallback) running a new Python."""
        isolation = self.isolation()
        cache = runtime_cache()
        launch = build_launch(
            isolation,
            workspace,
            cache.path if cache else None,
            cache.pycache if cache else False,
            limits.tmpfs_mb,
        )
        try:
            process = spawner.popen(
                args=launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=launch.env,
                cwd=launch.cwd,
                start_new_session=True,
            )
        except OSError:
            if launch.scratch is not None:
                shutil.rmtree(launch.scratch, ignore_errors=True)
            raise
        return ProcessChannel(
            process,
            mechanism=str(isolation.mechanism),
            own_user_namespace=isolation.own_user_namespace,
            scratch=launch.scratch,
        )


class ServiceLauncher:
    """Workers run by the sandbox service (`python -m app.sandbox.service`) on a Unix socket."""

    def __init__(self, socket_path: Path) -> None:
        """Point at the service.

        Args:
            socket_path: SANDBOX_SERVICE_SOCKET.
        """
        self.socket_path = Path(socket_path)
        self._status: tuple[float, SandboxStatus] | None = None
        self._lock = threading.Lock()

    def seccomp_filter(self) -> SeccompFilter | None:
        try:
            return compiled()
        except SeccompUnavailable:
            return None

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(SERVICE_TIMEOUT_SECONDS)
        try:
            sock.connect(str(self.socket_path))
        except OSError:
            sock.close()
            raise
        sock.settimeout(None)
        return sock

    def _ask(
        self, sock: socket.socket, message: Message, timeout: float = SERVICE_TIMEOUT_SECONDS
    ) -> Message:
        write_message(sock.fileno(), message)
        reader = FrameReader(sock.fileno())
        try:
            reply = reader.read(time.monotonic() + timeout)
        finally:
            reader.close()
        if reply is None:
            raise ConnectionError("the sandbox service closed the connection")
        return reply

    def _unreachable(self, exc: BaseException) -> SandboxStatus:
        return SandboxStatus(
            "required",
            None,
            "service",
            False,
            False,
            f"the sandbox service at {self.socket_path} does not answer "
            f"({type(exc).__name__}: {exc})",
            "start the sandbox service (docker compose: the `sandbox` service; its log says "
            "why it stopped) and check that SANDBOX_SERVICE_SOCKET names its socket",
        )

    def status(self) -> SandboxStatus:
        with self._lock:
            if self._status is not None and time.monotonic() - self._status[0] < STATUS_TTL_SECONDS:
                return self._status[1]
        try:
            with self._connect() as sock:
                reply = self._ask(sock, {"type": "status"})
            status = SandboxStatus(
                isolation=str(reply["isolation"]),
                mechanism=reply.get("mechanism"),
                location="service",
                available=bool(reply["available"]),
                isolated=bool(reply["isolated"]),
                detail=str(reply["detail"]),
                fix=reply.get("fix"),
                seccomp=tuple(reply.get("seccomp") or ()),
            )
        except (OSError, ProtocolError, KeyError, TypeError) as exc:
            status = self._unreachable(exc)
        with self._lock:
            self._status = (time.monotonic(), status)
        return status

    def close(self) -> None:
        """Nothing to release: each worker has its own connection."""

    def launch(self, workspace: Path, limits: SandboxLimits) -> SocketChannel:
        if not WORKSPACE_NAME.match(workspace.name):
            raise ValueError(f"a workspace folder name must be a plain id: {workspace.name!r}")
        try:
            sock = self._connect()
        except OSError as exc:
            raise SandboxUnavailable(self._unreachable(exc)) from exc
        try:
            reply = self._ask(
                sock,
                {"type": "spawn", "workspace": workspace.name, "tmpfs_mb": list(limits.tmpfs_mb)},
                SPAWN_TIMEOUT_SECONDS,
            )
        except (OSError, ProtocolError) as exc:
            sock.close()
            raise SandboxUnavailable(self._unreachable(exc)) from exc
        kind = reply.get("type")
        if kind == "spawned":
            return SocketChannel(
                sock,
                mechanism=str(reply.get("mechanism")),
                own_user_namespace=bool(reply.get("own_user_namespace")),
            )
        sock.close()
        if kind == "unavailable":
            with self._lock:
                self._status = None
            raise SandboxUnavailable(self.status())
        raise OSError(f"the sandbox service did not start a worker: {reply.get('error')}")


def prepare_sandbox(launcher: WorkerLauncher) -> None:
    """Probe the isolation and build the runtime cache now (call it at start-up, in a thread).

    Otherwise the first worker does it: the cache can take tens of seconds on a fresh runtime.

    Args:
        launcher: The launcher workers will come from.
    """
    if isinstance(launcher, LocalLauncher):
        runtime_cache()
    launcher.status()

"""The backend's side of the fork server (worker/zygote.py): start it, ask it for workers.

One fork server serves one workspaces folder. It is started on the first request and
again after it died; a request that it cannot answer raises `ForkServerError`, and the
launcher then starts that worker the ordinary way (see `LocalLauncher.launch`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from app.sandbox.isolation import Isolation, build_fork_server_launch
from app.sandbox.protocol import FrameReader, Message, write_message
from app.sandbox.runtime_cache import RuntimeCache
from app.sandbox.spawner import spawner
from app.sandbox.transport import WRITERS_GONE_SECONDS, Exit, kill_group, read_frame

logger = logging.getLogger(__name__)

# Importing the libraries: seconds on an idle machine, much longer on a crowded one.
START_TIMEOUT_SECONDS = 180.0
# From a request to the new worker's pidfd (a fork and a few mounts).
SPAWN_TIMEOUT_SECONDS = 30.0
STATUS_TIMEOUT_SECONDS = 5.0
# Names the fork server's end of the control socket (worker/zygote.py reads it).
CONTROL_FD_VARIABLE = "WORKBENCH_CONTROL_FD"


class ForkServerError(RuntimeError):
    """The fork server could not give a worker; the message says why."""

    def __init__(self, message: str, lasting: bool = False) -> None:
        """Say why.

        Args:
            message: The reason, for the log.
            lasting: The host cannot isolate forked workers at all (trying again is futile).
        """
        super().__init__(message)
        self.lasting = lasting


class ForkedChannel:
    """A worker forked by the fork server: frames on a socket, a pidfd to kill it."""

    def __init__(self, sock: socket.socket, pidfd: int, status_fd: int) -> None:
        """Wrap a new worker.

        Args:
            sock: The worker's end of the protocol (blocking stream socket).
            pidfd: A pidfd of the worker process.
            status_fd: The read end of the pipe its keeper writes its exit status to.
        """
        self.sock = sock
        self.mechanism = "bubblewrap"
        self.own_user_namespace = True
        self._pidfd = pidfd
        self._status_fd = status_fd
        self._reader = FrameReader(sock.fileno())
        self._exit: Exit | None = None

    def send(self, message: Message) -> None:
        if self._exit is not None:
            raise BrokenPipeError("no worker")
        write_message(self.sock.fileno(), message)

    def receive(self, deadline: float | None) -> Message | None:
        if self._exit is not None:
            return None
        return read_frame(self._reader, deadline)

    def write_raw(self, data: bytes) -> None:
        """Pass bytes on to the worker as they are (the sandbox service relays frames)."""
        self.sock.sendall(data)

    def alive(self) -> bool:
        if self._exit is not None:
            return False
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return not readable

    def kill(self) -> None:
        if self._exit is None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def reap(self) -> Exit:
        if self._exit is not None:
            return self._exit
        self.kill()
        if not select.select([self._pidfd], [], [], WRITERS_GONE_SECONDS)[0]:
            logger.warning(
                "a forked sandbox worker outlived SIGKILL by %.0f s", WRITERS_GONE_SECONDS
            )
        self._exit = Exit(_read_status(self._status_fd), "")
        self._reader.close()
        self.sock.close()
        os.close(self._pidfd)
        os.close(self._status_fd)
        return self._exit


def _read_status(fd: int) -> int | None:
    """The keeper's report of its worker's end (None if the keeper died first)."""
    text = b""
    deadline = time.monotonic() + STATUS_TIMEOUT_SECONDS
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 64)
        if not chunk:
            break
        text += chunk
    try:
        return int(text)
    except ValueError:
        return None


class ForkServer:
    """One fork server process for a workspaces folder (thread-safe)."""

    def __init__(self, isolation: Isolation, workspaces: Path, cache: RuntimeCache | None) -> None:
        """Describe the fork server; it starts on the first `spawn`.

        Args:
            isolation: The probe's outcome (bubblewrap).
            workspaces: The folder holding one workspace folder per session.
            cache: The prepared runtime cache, if any.
        """
        self.isolation = isolation
        self.workspaces = workspaces
        self._cache = cache
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._closed = False

    def spawn(self, workspace: Path, tmpfs_mb: tuple[int, int]) -> ForkedChannel:
        """A new worker for a workspace folder directly inside `workspaces` (blocking).

        Raises:
            ForkServerError: the fork server cannot start, or could not fork this worker.
        """
        if workspace.parent != self.workspaces:
            raise ForkServerError(f"{workspace} is not in {self.workspaces}")
        request = json.dumps({"workspace": workspace.name, "tmpfs_mb": list(tmpfs_mb)}).encode()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status_read, status_write = os.pipe()
        try:
            self._send(request, [theirs.fileno(), status_write])
        except BaseException:
            ours.close()
            os.close(status_read)
            raise
        finally:
            theirs.close()
            os.close(status_write)
        try:
            return self._answer(ours, status_read)
        except BaseException:
            ours.close()
            os.close(status_read)
            raise

    def _send(self, request: bytes, fds: list[int]) -> None:
        with self._lock:
            for attempt in (1, 2):
                control = self._started()
                try:
                    socket.send_fds(control, [request], fds)
                    return
                except OSError as exc:
                    self._stop_locked()
                    if attempt == 2:
                        raise ForkServerError(f"the fork server stopped answering: {exc}") from exc

    @staticmethod
    def _answer(sock: socket.socket, status_read: int) -> ForkedChannel:
        sock.settimeout(SPAWN_TIMEOUT_SECONDS)
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 16, 1)
        except OSError as exc:
            raise ForkServerError(f"no answer from the fork server: {exc}") from exc
        sock.settimeout(None)
        if message[:1] == b"P" and len(fds) == 1:
            return ForkedChannel(sock, fds[0], status_read)
        for fd in fds:
            os.close(fd)
        reason = message[1:].decode("utf-8", "replace").strip() or "it closed the connection"
        raise ForkServerError(f"the fork server could not start a worker: {reason}")

    def _started(self) -> socket.socket:
        """The control socket of a running fork server, starting one if needed (locked)."""
        if self._closed:
            raise ForkServerError("the fork server is closed")
        if self._control is not None and self._process is not None:
            if self._process.poll() is None:
                return self._control
            logger.warning(
                "the sandbox fork server ended (%s); starting a new one", self._process.returncode
            )
            self._stop_locked()
        self.workspaces.mkdir(parents=True, exist_ok=True)
        cache = self._cache
        launch = build_fork_server_launch(
            self.isolation,
            self.workspaces,
            cache.path if cache else None,
            cache.pycache if cache else False,
        )
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = spawner.popen(
                args=launch.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={**launch.env, CONTROL_FD_VARIABLE: str(theirs.fileno())},
                cwd=launch.cwd,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        threading.Thread(target=_log_stderr, args=(process,), daemon=True).start()
        self._process, self._control = process, ours
        ours.settimeout(START_TIMEOUT_SECONDS)
        try:
            ready = json.loads(ours.recv(1 << 16) or b"{}")
        except (OSError, ValueError) as exc:
            ready = {"error": f"{type(exc).__name__}: {exc}"}
        ours.settimeout(None)
        if ready.get("type") == "unusable":
            self._stop_locked()
            raise ForkServerError(
                f"forked workers cannot be isolated on this host: {ready.get('error')}", True
            )
        if ready.get("type") != "ready":
            self._stop_locked()
            raise ForkServerError(
                f"the fork server did not start ({ready or 'it ended'}; its log says why)"
            )
        logger.info("sandbox fork server ready for %s", self.workspaces)
        return ours

    def _stop_locked(self) -> None:
        if self._process is not None:
            kill_group(self._process)
            self._process.wait()
        if self._control is not None:
            self._control.close()
        self._process = self._control = None

    def close(self) -> None:
        """Stop the fork server; the workers it forked end with it."""
        with self._lock:
            self._closed = True
            self._stop_locked()


def _log_stderr(process: subprocess.Popen[bytes]) -> None:
    if process.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):
        for line in process.stderr:
            logger.warning("sandbox fork server: %s", line.decode("utf-8", "replace").rstrip())

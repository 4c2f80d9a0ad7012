"""The channel to one worker: a child process on pipes, or a connection to the sandbox service.

Both speak the same frames (`protocol.py`); the backend's `SandboxWorker` does not know
which one it has. Killing is the channel's business: a local worker's process group is
killed, a remote one's connection is closed, which makes the service kill it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from app.sandbox import hostfs
from app.sandbox.protocol import FrameReader, Message, ProtocolError, write_message

logger = logging.getLogger(__name__)
# How long a killed worker's own process may outlive bwrap (normally milliseconds).
WRITERS_GONE_SECONDS = 10.0
# How long the sandbox service may take to say a worker it was told to stop has ended: it
# waits up to WRITERS_GONE_SECONDS for the worker's writers to be gone, then reads its
# exit status.
EXIT_REPORT_SECONDS = 2 * WRITERS_GONE_SECONDS


@dataclass(frozen=True)
class Exit:
    """How a worker ended: its exit status as Popen reports it (-N for a signal), its stderr."""

    returncode: int | None
    stderr: str


class WorkerChannel(Protocol):
    """One live worker, as the backend talks to it."""

    mechanism: str
    own_user_namespace: bool

    def send(self, message: Message) -> None:
        """Send one frame (raises OSError when the worker is gone)."""

    def receive(self, deadline: float | None) -> Message | None:
        """The next frame; None when the worker is gone. TimeoutError past the deadline."""

    def alive(self) -> bool:
        """Whether the worker may still answer."""

    def kill(self) -> None:
        """Stop the worker now (from any thread)."""

    def reap(self) -> Exit:
        """Make sure the worker is gone, release everything, and say how it ended."""


def _wait_for_end_of(pipe: IO[bytes] | None, seconds: float) -> None:
    """Read a pipe until every process that could write to it is gone (or time is up)."""
    if pipe is None:
        return
    fd = pipe.fileno()
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([fd], [], [], left)
        try:
            if readable and not os.read(fd, 1 << 16):
                return
        except OSError:
            return
    logger.warning("a sandbox worker still held its pipe %.0f s after it was killed", seconds)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a worker's whole process group (it leads its own session)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def read_frame(reader: FrameReader, deadline: float | None) -> Message | None:
    """The next frame from a worker; None when it is gone (or sent garbage). TimeoutError
    past the deadline."""
    try:
        return reader.read(deadline)
    except TimeoutError:
        raise
    except (OSError, ProtocolError):
        return None


class ProcessChannel:
    """A worker this process started, on its stdin/stdout; stderr is kept for crash reports."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        mechanism: str,
        own_user_namespace: bool,
        scratch: Path | None = None,
    ) -> None:
        """Wrap a started worker.

        Args:
            process: The worker (stdin, stdout and stderr are pipes).
            mechanism: "bubblewrap" or "rlimits".
            own_user_namespace: Whether it has a user namespace of its own.
            scratch: A host folder to delete once it is gone.
        """
        assert process.stdout is not None
        self.process = process
        self.mechanism = mechanism
        self.own_user_namespace = own_user_namespace
        self._scratch = scratch
        self._reader = FrameReader(process.stdout.fileno())

    def send(self, message: Message) -> None:
        if self.process.stdin is None:
            raise BrokenPipeError("no worker")
        write_message(self.process.stdin.fileno(), message)

    def receive(self, deadline: float | None) -> Message | None:
        return read_frame(self._reader, deadline)

    def write_raw(self, data: bytes) -> None:
        """Pass bytes on to the worker as they are (the sandbox service relays frames)."""
        if self.process.stdin is None:
            raise BrokenPipeError("no worker")
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        kill_group(self.process)

    def reap(self) -> Exit:
        kill_group(self.process)
        returncode = self.process.wait()
        # bubblewrap's worker runs in a session of its own and dies of --die-with-parent,
        # a moment after bwrap: until its end of the pipe closes it may still write files
        # (say, into a workspace being cleaned up after it went over its quota).
        _wait_for_end_of(self.process.stdout, WRITERS_GONE_SECONDS)
        self._reader.close()
        stderr = b""
        if self.process.stderr is not None:
            os.set_blocking(self.process.stderr.fileno(), False)
            stderr = self.process.stderr.read(1 << 16) or b""
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        if self._scratch is not None:
            try:  # the worker's home without bubblewrap: the code wrote there
                hostfs.remove_tree(self._scratch)
            except OSError as exc:
                logger.warning("Sandbox: could not remove %s: %s", self._scratch, exc)
        return Exit(returncode, stderr.decode("utf-8", "replace"))


class SocketChannel:
    """A worker the sandbox service runs for us, behind one Unix-socket connection.

    The service relays frames both ways; when the worker ends it sends an `exited` frame
    with the exit status and closes. Closing our sending side makes it kill the worker;
    its `exited` frame, sent once the worker is gone, still comes back.
    """

    def __init__(self, sock: socket.socket, *, mechanism: str, own_user_namespace: bool) -> None:
        """Wrap a connection on which the service has answered `spawned`.

        Args:
            sock: The connected socket (blocking).
            mechanism: What isolates the worker on the service's side.
            own_user_namespace: Whether it has a user namespace of its own.
        """
        self.sock = sock
        self.mechanism = mechanism
        self.own_user_namespace = own_user_namespace
        self._reader = FrameReader(sock.fileno())
        self._exit: Exit | None = None
        self._closed = False

    def send(self, message: Message) -> None:
        if self._closed or self._exit is not None:
            raise BrokenPipeError("no worker")
        write_message(self.sock.fileno(), message)

    def receive(self, deadline: float | None) -> Message | None:
        if self._exit is not None or self._closed:
            return None
        return self._frame(deadline)

    def _frame(self, deadline: float | None) -> Message | None:
        """The worker's next frame; None when it has ended (the `exited` frame is kept)."""
        message = read_frame(self._reader, deadline)
        if message is not None and message.get("type") == "exited":
            code = message.get("returncode")
            self._exit = Exit(code if isinstance(code, int) else None, str(message.get("stderr")))
            return None
        return message

    def alive(self) -> bool:
        return self._exit is None and not self._closed

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def reap(self) -> Exit:
        """Stop the worker and wait until the service says it has ended.

        The service kills the worker when our side closes, but that takes it a moment (much
        longer on a crowded machine), and the worker writes on meanwhile: the backend cleans
        up after a worker it stopped (what a step over its quota wrote) only once it is gone.
        """
        if not self._closed:
            self.kill()
            deadline = time.monotonic() + EXIT_REPORT_SECONDS
            try:
                while self._exit is None and self._frame(deadline) is not None:
                    pass  # what the worker still sent: too late for anyone
            except TimeoutError:
                logger.warning(
                    "the sandbox service did not say within %.0f s that a worker it was told "
                    "to stop has ended",
                    EXIT_REPORT_SECONDS,
                )
            self._closed = True
            self._reader.close()
            self.sock.close()
        return self._exit or Exit(None, "")

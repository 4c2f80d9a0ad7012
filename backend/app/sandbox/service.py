"""The sandbox service: runs sandbox workers for a backend that cannot create namespaces.

    python -m app.sandbox.service --socket /run/workbench-sandbox/sandbox.sock \\
        --workspaces /workspaces

In docker compose the backend's container cannot create the namespaces bubblewrap needs,
and it holds every secret. This process runs in a container of its own (no secrets, no
network, a seccomp profile that allows bubblewrap's namespace calls) and starts workers
exactly as the backend would start them itself. The backend reaches it over a Unix socket
on a shared volume, one connection per worker:

    backend -> service: {"type": "status"}                       -> the SandboxStatus fields
    backend -> service: {"type": "spawn", "workspace": "<id>", "tmpfs_mb": [tmp, shm]}
    service -> backend: {"type": "spawned", ...} | {"type": "unavailable"} | {"type": "failed"}

After `spawned` the connection carries the worker's own frames both ways; when the worker
ends the service sends {"type": "exited", "returncode", "stderr"} and closes, and when the
backend closes the connection the service kills the worker. Workspaces are named by their
folder under --workspaces, never by a path.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import socket
import socketserver
import stat
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

from app.sandbox.forkserver import ForkedChannel
from app.sandbox.interface import SandboxLimits
from app.sandbox.isolation import Policy
from app.sandbox.layout import WORKSPACE_NAME
from app.sandbox.protocol import (
    HEADER,
    FrameReader,
    Message,
    ProtocolError,
    encode,
    write_message,
)
from app.sandbox.runtime_cache import runtime_cache
from app.sandbox.spawn import LocalLauncher
from app.sandbox.transport import ProcessChannel

logger = logging.getLogger("app.sandbox.service")

REQUEST_TIMEOUT_SECONDS = 10.0
DEFAULT_MAX_WORKERS = 64


class SandboxService(socketserver.ThreadingUnixStreamServer):
    """The socket server; one thread per connection, i.e. per worker."""

    daemon_threads = True

    def __init__(
        self, socket_path: Path, workspaces: Path, launcher: LocalLauncher, max_workers: int
    ) -> None:
        """Bind the socket (replacing a stale one) with owner and group access only.

        Args:
            socket_path: Where to listen.
            workspaces: The folder holding one workspace folder per session.
            launcher: Starts the workers.
            max_workers: Workers alive at once at the most.
        """
        self.workspaces = workspaces.resolve()
        self.launcher = launcher
        self.max_workers = max_workers
        self.live = 0
        self.live_lock = threading.Lock()
        socket_path.parent.mkdir(parents=True, exist_ok=True)
        socket_path.unlink(missing_ok=True)
        previous = os.umask(0o117)
        try:
            super().__init__(str(socket_path), _Connection)
        finally:
            os.umask(previous)


class _Connection(socketserver.BaseRequestHandler):
    server: SandboxService

    def handle(self) -> None:
        sock = cast(socket.socket, self.request)
        reader = FrameReader(sock.fileno())
        try:
            request = reader.read(time.monotonic() + REQUEST_TIMEOUT_SECONDS)
        except (OSError, ProtocolError):
            return
        finally:
            reader.close()
        if request is None:
            return
        kind = request.get("type")
        if kind == "status":
            status = dataclasses.asdict(self.server.launcher.status())
            status["seccomp"] = list(status["seccomp"])
            self._reply(sock, {"type": "status", **status})
        elif kind == "spawn":
            self._spawn(sock, request)
        else:
            self._reply(sock, {"type": "failed", "error": f"unknown request {kind!r}"})

    def _reply(self, sock: socket.socket, message: Message) -> None:
        with contextlib.suppress(OSError):
            write_message(sock.fileno(), message)

    def _workspace(self, name: Any) -> Path | None:
        if not isinstance(name, str) or not WORKSPACE_NAME.match(name):
            return None
        path = self.server.workspaces / name
        try:
            info = path.lstat()
        except OSError:
            return None
        return path if stat.S_ISDIR(info.st_mode) else None

    def _spawn(self, sock: socket.socket, request: Message) -> None:
        launcher = self.server.launcher
        if not launcher.status().available:
            self._reply(sock, {"type": "unavailable"})
            return
        workspace = self._workspace(request.get("workspace"))
        if workspace is None:
            self._reply(sock, {"type": "failed", "error": "no such workspace"})
            return
        with self.server.live_lock:
            if self.server.live >= self.server.max_workers:
                self._reply(sock, {"type": "failed", "error": "the sandbox service is full"})
                return
            self.server.live += 1
        try:
            tmp, shm = (int(v) for v in request.get("tmpfs_mb", (64, 16)))
            # Only the tmpfs sizes matter here; the worker applies its own limits.
            limits = SandboxLimits(memory_mb=max(256, 8 * tmp, 32 * shm))
            try:
                channel = launcher.launch(workspace, limits)
            except Exception as exc:
                self._reply(sock, {"type": "failed", "error": f"{type(exc).__name__}: {exc}"})
                return
            self._reply(
                sock,
                {
                    "type": "spawned",
                    "mechanism": channel.mechanism,
                    "own_user_namespace": channel.own_user_namespace,
                },
            )
            self._relay(sock, channel)
        finally:
            with self.server.live_lock:
                self.server.live -= 1

    def _relay(self, sock: socket.socket, channel: ProcessChannel | ForkedChannel) -> None:
        def to_worker() -> None:
            # Raw bytes: the worker parses its own frames. The backend hanging up kills it.
            try:
                while data := sock.recv(1 << 16):
                    channel.write_raw(data)
            except OSError:
                pass
            channel.kill()

        pump = threading.Thread(target=to_worker, name="sandbox-relay", daemon=True)
        pump.start()
        # Whole frames only: a worker killed halfway through a frame must not leave half
        # of it in front of the `exited` frame.
        while (message := channel.receive(None)) is not None:
            try:
                write_message(sock.fileno(), message)
            except OSError:
                channel.kill()
                break
        ended = channel.reap()
        self._reply(
            sock, {"type": "exited", "returncode": ended.returncode, "stderr": ended.stderr[-4000:]}
        )
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        pump.join(5)


def probe(socket_path: Path, timeout: float = 4.0) -> bool:
    """Whether a service listens at the socket and answers a status request."""
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(timeout)
            sock.connect(str(socket_path))
            sock.sendall(encode({"type": "status"}))
            with sock.makefile("rb") as replies:
                header = replies.read(HEADER.size)
                (size,) = HEADER.unpack(header)
                reply = json.loads(replies.read(size))
    except (OSError, ValueError, struct.error):
        return False
    return isinstance(reply, dict) and reply.get("type") == "status"


def main(argv: list[str] | None = None) -> int:
    """Run the service until it is stopped.

    Args:
        argv: Command-line arguments (see --help); each has an environment fallback.

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m app.sandbox.service")
    parser.add_argument("--socket", default=os.environ.get("SANDBOX_SERVICE_SOCKET"))
    parser.add_argument("--workspaces", default=os.environ.get("SANDBOX_WORKSPACES_DIR"))
    parser.add_argument(
        "--isolation",
        choices=("required", "none"),
        default=os.environ.get("SANDBOX_ISOLATION", "required"),
    )
    parser.add_argument("--bwrap", default=os.environ.get("SANDBOX_BWRAP") or None)
    parser.add_argument(
        "--max-workers",
        type=int,
        default=int(os.environ.get("SANDBOX_SERVICE_MAX_WORKERS", DEFAULT_MAX_WORKERS)),
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="exit 0 if the service at --socket answers (a health check), 1 otherwise",
    )
    args = parser.parse_args(argv)
    if args.probe:
        return 0 if args.socket and probe(Path(args.socket)) else 1
    if not args.socket or not args.workspaces:
        parser.error("--socket and --workspaces (or their environment variables) are required")
    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "info").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Workers are forked by a fork server unless SANDBOX_FORK_SERVER=false.
    fork_server = os.environ.get("SANDBOX_FORK_SERVER", "true").lower() not in ("0", "false", "no")
    workspaces = Path(args.workspaces) if fork_server else None
    launcher = LocalLauncher(cast(Policy, args.isolation), args.bwrap, workspaces)
    runtime_cache()
    status = launcher.status()
    if status.available:
        logger.info("sandbox service: %s (%s)", status.mechanism, status.detail)
    else:
        # Keep serving: the backend then reports the cause instead of "no answer".
        logger.error(
            "sandbox service: analysis is disabled: %s. Fix: %s", status.detail, status.fix
        )
    Path(args.workspaces).mkdir(parents=True, exist_ok=True)
    server = SandboxService(
        Path(args.socket), Path(args.workspaces), launcher, max(1, args.max_workers)
    )
    logger.info("sandbox service listening on %s", args.socket)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        launcher.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

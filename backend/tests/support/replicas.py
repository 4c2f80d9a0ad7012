"""Backend processes of their own (`python -m app`), as replicas or under load.

Unlike `LiveServer` (a server in a thread of the test process), each of these is a whole
backend: it can be killed with everything it started, the way a machine dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

# What a hang is (it gives up sooner when the process exits): not a deadline a busy
# machine can miss.
READY_TIMEOUT_SECONDS = 900.0


class BackendProcess:
    """One backend started with the given settings; its output goes to `folder/backend.log`."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder = folder
        self.env = env
        self.port = int(env["PORT"])
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "backend.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def command(self) -> list[str]:
        """What starts the backend (a benchmark may run it under a profiler)."""
        return [sys.executable, "-m", "app"]

    def start(self) -> BackendProcess:
        """Start it (its own process group: a kill takes its sandbox workers too)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=Path(__file__).resolve().parents[2],
                start_new_session=True,
            )
        return self

    def wait_ready(self) -> BackendProcess:
        """Wait until /readyz answers 200.

        Raises:
            RuntimeError: It exited or did not become ready in time (with its log's tail).
        """
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"the backend exited:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"the backend did not become ready:\n{self.tail()}")

    def kill(self) -> None:
        """SIGKILL the backend and everything it started, at once, as a dying machine."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        """Stop it gracefully (SIGTERM), or kill it after 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

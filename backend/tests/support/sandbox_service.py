"""The sandbox service as compose runs it: its own process, its own socket, no secrets."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from app.sandbox import ServiceLauncher

BACKEND_DIR = Path(__file__).resolve().parents[2]
# What a hang is (it gives up sooner when the process exits): not a deadline a busy
# machine can miss.
START_SECONDS = 900.0


class SandboxServiceProcess:
    """`python -m app.sandbox.service` started with a scrubbed environment."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.socket = folder / "sandbox.sock"
        self.workspaces = folder / "workspaces"
        self.log = folder / "service.log"
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> SandboxServiceProcess:
        self.workspaces.mkdir(parents=True, exist_ok=True)
        # Only what a process needs to run: none of the backend's settings or secrets.
        keep = ("PATH", "HOME", "LANG", "XDG_CACHE_HOME", "WORKBENCH_SANDBOX_CACHE")
        env = {name: os.environ[name] for name in keep if name in os.environ}
        env["PYTHONPATH"] = str(BACKEND_DIR)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "app.sandbox.service",
                    "--socket",
                    str(self.socket),
                    "--workspaces",
                    str(self.workspaces),
                    *self.extra,
                ],
                env=env,
                cwd=BACKEND_DIR,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_SECONDS
        while not self.socket.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the sandbox service did not start: {self.log.read_text()}")
            time.sleep(0.05)
        return self

    def launcher(self) -> ServiceLauncher:
        return ServiceLauncher(self.socket)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

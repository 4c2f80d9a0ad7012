"""A server to attack, with things worth stealing and tripwires around it.

One server per mode: "local" (the backend starts bubblewrapped workers itself, as `make
run` does) and "service" (a separate sandbox service process runs them, as docker compose
does). The backend's environment holds a canary secret; the host holds a canary file; a
loopback listener records any connection. Every payload is asked as a real question
through the API, with the scripted LLM writing the payload as its code.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM
from tests.support.sandbox_service import SandboxServiceProcess
from tests.support.server import LiveServer

CANARY_ENV = "WORKBENCH_REDTEAM_CANARY"


class Listener:
    """A loopback TCP server that only counts who connects."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@dataclass
class Target:
    """The server under attack and what must stay untouched around it."""

    mode: str
    live: LiveServer
    api: Api
    canary: str
    canary_file: Path
    canary_hash: str
    markers: Path
    listener: Listener
    project_id: str
    other_workspace: Path
    data_dir: Path
    sessions: list[str] = field(default_factory=list)

    def session(self) -> str:
        response = self.api.post(f"/projects/{self.project_id}/sessions", json={"title": "x"})
        assert response.status_code == 201, response.text
        session_id = str(response.json()["id"])
        self.sessions.append(session_id)
        return session_id


@pytest.fixture(scope="module", params=["local", "service"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM
) -> Iterator[Target]:
    mode = str(request.param)
    root = tmp_path_factory.mktemp(f"redteam-{mode}")
    canary = f"canary-{secrets.token_hex(12)}"
    canary_file = root / "host-secret.txt"
    canary_file.write_text(f"host file {canary}\n")
    markers = root / "markers"
    markers.mkdir()
    data_dir = root / "data"
    data_dir.mkdir()
    overrides: dict[str, object] = {
        "SANDBOX_DISK_MB": 64,
        # What a step, and a session in all, may keep of charts, tables and files.
        "SANDBOX_ARTIFACTS_MB": 16,
        "SESSION_ARTIFACTS_MB": 40,
        "SANDBOX_MEMORY_MB": 768,
        # Limits must be reached by what they measure, not by a slow machine.
        "SANDBOX_STEP_TIMEOUT_SECONDS": 60,
        "AGENT_MAX_STEPS": 3,
    }
    service = None
    if mode == "service":
        service = SandboxServiceProcess(root / "service").start()
        (data_dir / "workspaces").symlink_to(service.workspaces, target_is_directory=True)
        overrides["SANDBOX_SERVICE_SOCKET"] = str(service.socket)
    previous = os.environ.get(CANARY_ENV)
    os.environ[CANARY_ENV] = canary  # the backend runs in this process: its environment
    settings = stack_settings("embedded", data_dir, LLM_API_BASE=llm.api_base, **overrides)
    live = LiveServer(settings).start()
    listener = Listener()
    try:
        with Api(live) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as api:
            project = api.project("Red team")
            upload = api.upload(project["id"], "sales.csv", b"region,amount\nnorth,10\n")
            assert upload.status_code == 201
            other = api.post(f"/projects/{project['id']}/sessions", json={"title": "other"})
            other_id = str(other.json()["id"])
            other_workspace = (data_dir / "workspaces" / other_id).resolve()
            other_workspace.mkdir(parents=True)
            (other_workspace / "secret.csv").write_text(f"secret\n{canary}\n")
            yield Target(
                mode,
                live,
                api,
                canary,
                canary_file,
                hashlib.sha256(canary_file.read_bytes()).hexdigest(),
                markers,
                listener,
                str(project["id"]),
                other_workspace,
                data_dir,
            )
    finally:
        listener.close()
        live.stop()
        if service is not None:
            service.stop()
        if previous is None:
            os.environ.pop(CANARY_ENV, None)
        else:
            os.environ[CANARY_ENV] = previous

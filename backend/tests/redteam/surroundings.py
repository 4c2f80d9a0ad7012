"""What lies around the server under attack: what a worker must never reach, and how the
red team looks at it after each attack.

Two places hold it. `LocalSurroundings`: the backend runs in the test's own process
(modes "local" and "service"), so the "host" is this machine: a canary file and a markers
folder in the test's temporary folder, a loopback listener, this process's memory and pid.
`ComposeSurroundings`: the stack `make test-deploy` deployed (mode "compose"), where a
worker that escaped would find itself in the sandbox service's container (no network, the
workspaces volume), and a link the backend followed would resolve in the backend's
container (which holds every secret and the data folder /data). There, each fact is
looked at with `docker exec` in the container it belongs to.

The paths a payload names (`canary_file`, `markers`, `data_dir`, `other_workspace`,
`backend_dir`) are real where the attack would land: on this machine, or in the containers.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, TypeVar

from minio import Minio

from tests.support.deployment import Deployment, sh

T = TypeVar("T")
BACKEND_DIR = Path(__file__).resolve().parents[2]
MARKER_GLOB = "redteam-marker-*"


class Surroundings(Protocol):
    """What must stay untouched around the server, and how to look at it."""

    canary: str
    # Name -> value of what may never show in what a user or the model sees.
    secrets: dict[str, str]
    canary_file: PurePosixPath
    markers: PurePosixPath
    data_dir: PurePosixPath
    backend_dir: PurePosixPath
    other_workspace: PurePosixPath
    # The process a kill payload aims at.
    backend_pid: int
    listener_port: int

    def changes(self) -> list[str]:
        """What an attack changed that it must not have (empty: nothing)."""
        ...

    def connections(self) -> int:
        """Connections the listener has had."""
        ...

    def workspace_usage(self, session_id: str) -> int:
        """What a session's workspace takes, by du: the larger of allocated and apparent."""
        ...

    def workspace_exists(self, session_id: str) -> bool: ...

    def workspace_files(self, session_id: str, pattern: str) -> list[str]:
        """Names in the workspace's top folder that match a glob pattern."""
        ...

    def manifest_exists(self, session_id: str) -> bool:
        """Whether the backend still keeps the workspace's manifest."""
        ...

    def biggest_object(self) -> int:
        """The size of the biggest object stored since the target was set up."""
        ...

    def peak_memory_growth(self, during: Callable[[], T]) -> tuple[int, T]:
        """How far the backend's peak resident size rose while `during` ran, in bytes."""
        ...

    def close(self) -> None: ...


# --- the backend in this process ------------------------------------------------------------


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


class LocalSurroundings:
    """This machine, where the backend runs in the test's process (its environment holds
    the canary: the fixture sets it before the server starts)."""

    def __init__(
        self, root: Path, canary: str, data_dir: Path, secrets: dict[str, str], other: str
    ) -> None:
        self.canary = canary
        self.secrets = {"canary": canary, **secrets}
        self._canary_file = root / "host-secret.txt"
        self._canary_file.write_text(f"host file {canary}\n")
        self._canary_hash = _sha256(self._canary_file)
        self._markers = root / "markers"
        self._markers.mkdir()
        self._data_dir = data_dir
        self._other = (data_dir / "workspaces" / other).resolve()
        self._other.mkdir(parents=True)
        (self._other / "secret.csv").write_text(f"secret\n{canary}\n")
        self._listener = Listener()
        self.canary_file = PurePosixPath(self._canary_file)
        self.markers = PurePosixPath(self._markers)
        self.data_dir = PurePosixPath(data_dir.resolve())
        self.backend_dir = PurePosixPath(BACKEND_DIR)
        self.other_workspace = PurePosixPath(self._other)
        self.backend_pid = os.getpid()
        self.listener_port = self._listener.port

    def changes(self) -> list[str]:
        changed = []
        if _sha256(self._canary_file) != self._canary_hash:
            changed.append("the canary file changed")
        if list(self._markers.iterdir()):
            changed.append(f"markers appeared: {sorted(p.name for p in self._markers.iterdir())}")
        for folder in (
            BACKEND_DIR,
            self._data_dir,
            Path("/etc"),
            Path("/root"),
            BACKEND_DIR / ".venv",
        ):
            strays = sorted(p.name for p in folder.glob(MARKER_GLOB))
            if strays:
                changed.append(f"files written in {folder}: {strays}")
        if any(self._other.glob(MARKER_GLOB)):
            changed.append("a file was written into another session's workspace")
        return changed

    def connections(self) -> int:
        return self._listener.connections

    def _workspace(self, session_id: str) -> Path:
        return self._data_dir / "workspaces" / session_id

    def workspace_usage(self, session_id: str) -> int:
        sizes = []
        for apparent in ([], ["--apparent-size"]):
            out = subprocess.run(
                ["du", "-s", "-B1", *apparent, str(self._workspace(session_id))],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            sizes.append(int(out.split()[0]))
        return max(sizes)

    def workspace_exists(self, session_id: str) -> bool:
        return self._workspace(session_id).exists()

    def workspace_files(self, session_id: str, pattern: str) -> list[str]:
        return sorted(p.name for p in self._workspace(session_id).glob(pattern))

    def manifest_exists(self, session_id: str) -> bool:
        return (self._data_dir / "workspace-manifests" / f"{session_id}.json").exists()

    def biggest_object(self) -> int:
        stored = [p for p in (self._data_dir / "objects").rglob("*") if p.is_file()]
        return max((p.stat().st_size for p in stored), default=0)

    def peak_memory_growth(self, during: Callable[[], T]) -> tuple[int, T]:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        before = _status_kb(Path("/proc/self/status").read_text(), "VmRSS")
        result = during()
        after = _status_kb(Path("/proc/self/status").read_text(), "VmHWM")
        return (after - before) << 10, result

    def close(self) -> None:
        self._listener.close()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _status_kb(status: str, field: str) -> int:
    for line in status.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/<pid>/status:\n{status}")


# --- the deployed stack ---------------------------------------------------------------------

# In both containers: their /tmp is a tmpfs the image's user writes (the root file systems
# are read-only). A worker's /tmp is its own, so this folder is out of its reach.
REDTEAM = PurePosixPath("/tmp/redteam")
WORKSPACES = PurePosixPath("/workspaces")  # the sandbox service's (docker-compose.yml)
DATA_DIR = PurePosixPath("/data")  # the backend's DATA_DIR
BACKEND_IMAGE_DIR = PurePosixPath("/app/backend")  # backend/Dockerfile's WORKDIR
# Where a marker must not appear, in either container.
STRAY_FOLDERS = [
    "/",
    str(BACKEND_IMAGE_DIR),
    str(BACKEND_IMAGE_DIR / ".venv"),
    str(DATA_DIR),
    str(WORKSPACES),
    "/etc",
    "/root",
    "/tmp",
]

# Run in a container: lays the canary file and the markers folder out (and, in the
# sandbox's, another session's workspace with a secret in it).
SETUP = r"""
import json, os, shutil, sys
c = json.loads(sys.argv[1])
shutil.rmtree(c["root"], ignore_errors=True)
os.makedirs(c["markers"])
with open(c["canary_file"], "w") as f:
    f.write(f"host file {c['canary']}\n")
if c.get("other"):
    os.makedirs(c["other"])
    with open(os.path.join(c["other"], "secret.csv"), "w") as f:
        f.write(f"secret\n{c['canary']}\n")
"""

# Run in a container after an attack: the list of what changed (JSON).
CHECK = r"""
import glob, hashlib, json, os, sys
c = json.loads(sys.argv[1])
found = []
try:
    with open(c["canary_file"], "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
except OSError as exc:
    digest = repr(exc)
if digest != c["canary_hash"]:
    found.append("the canary file changed")
markers = sorted(os.listdir(c["markers"]))
if markers:
    found.append(f"markers appeared: {markers}")
for folder in c["folders"]:
    strays = sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, c["glob"])))
    if strays:
        found.append(f"files written in {folder}: {strays}")
if c.get("other") and glob.glob(os.path.join(c["other"], c["glob"])):
    found.append("a file was written into another session's workspace")
for pid in c.get("alive", []):
    if not os.path.exists(f"/proc/{pid}"):
        found.append(f"process {pid} is gone")
print(json.dumps(found))
"""

# Started in the sandbox's container (network_mode: none: its own loopback, which no worker
# shares): counts connections, and writes its pid, port and count into a folder.
LISTENER = r"""
import os, socket, sys
folder = sys.argv[1]
def note(name, value):
    with open(os.path.join(folder, name + ".part"), "w") as f:
        f.write(str(value))
    os.replace(os.path.join(folder, name + ".part"), os.path.join(folder, name))
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
note("connections", 0)
note("pid", os.getpid())
note("port", s.getsockname()[1])
count = 0
while True:
    conn, _ = s.accept()
    count += 1
    conn.close()
    note("connections", count)
"""

# The sandbox service's own process: the first python running app.sandbox.service (pid 1
# is tini, whose command line names it too; its fork server and workers come after).
SERVICE_PID = r"""
import os
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        continue
    if os.path.basename(argv[0]).startswith(b"python") and b"app.sandbox.service" in argv:
        print(pid)
        break
"""

NAMES = r"""
import glob, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], sys.argv[2]))):
    print(os.path.basename(path))
"""


class ComposeSurroundings:
    """The deployed stack's containers: the sandbox service's, where an escaped worker
    would be, and the backend's, whose /data and secrets an attack might aim at."""

    def __init__(self, deployment: Deployment, canary: str, other: str) -> None:
        self.deployment = deployment
        self.canary = canary
        self.secrets = {"canary": canary, **deployment.secrets}
        self.backend = deployment.container("backend")
        self.sandbox = deployment.container("sandbox")
        self.canary_file = REDTEAM / "host-secret.txt"
        self.markers = REDTEAM / "markers"
        self.data_dir = DATA_DIR
        self.backend_dir = BACKEND_IMAGE_DIR
        self.other_workspace = WORKSPACES / other
        layout = {
            "root": str(REDTEAM),
            "markers": str(self.markers),
            "canary_file": str(self.canary_file),
            "canary": canary,
        }
        # The same canary at the same path in both: a link planted in a workspace that the
        # backend followed would resolve in the backend's container.
        self._python(self.backend, SETUP, json.dumps(layout))
        self._python(
            self.sandbox, SETUP, json.dumps({**layout, "other": str(self.other_workspace)})
        )
        self._canary_hash = hashlib.sha256(f"host file {canary}\n".encode()).hexdigest()
        listener = REDTEAM / "listener"
        self._exec(self.sandbox, "mkdir", "-p", str(listener))
        sh("docker", "exec", "-d", self.sandbox, "python", "-c", LISTENER, str(listener))
        deadline = time.monotonic() + 30
        while True:
            port = self._exec(self.sandbox, "cat", str(listener / "port"), check=False)
            if port.returncode == 0:
                break
            assert time.monotonic() < deadline, f"the listener did not start: {port.stderr}"
            time.sleep(0.2)
        self.listener_port = int(port.stdout)
        self._listener = listener
        self._listener_pid = int(self._exec(self.sandbox, "cat", str(listener / "pid")).stdout)
        pid = self._python(self.sandbox, SERVICE_PID).strip()
        assert pid, "no sandbox service process in its container"
        self.backend_pid = int(pid)
        self._started = self._started_at()
        settings = deployment.s3
        self._s3 = Minio(
            settings.endpoint,
            access_key=settings.access_key,
            secret_key=settings.secret_key,
            secure=False,
        )
        self._bucket = settings.bucket
        # The stack's store outlives this fixture: only what is stored from now on counts.
        self._objects_before = {o.object_name for o in self._objects()}

    def _exec(
        self, container: str, *argv: str, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["docker", "exec", container, *argv], capture_output=True, text=True, timeout=120
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"docker exec {container[:12]} {argv[0]} exited {done.returncode}: "
                f"{done.stdout[-2000:]} {done.stderr[-2000:]}"
            )
        return done

    def _python(self, container: str, code: str, *args: str) -> str:
        return self._exec(container, "python", "-c", code, *args).stdout

    def _started_at(self) -> str:
        return sh(
            "docker", "inspect", "--format", "{{.State.StartedAt}}", self.backend, self.sandbox
        ).stdout

    def changes(self) -> list[str]:
        changed = []
        if self._started_at() != self._started:
            changed.append("a container of the stack was restarted")
        check = {
            "canary_file": str(self.canary_file),
            "canary_hash": self._canary_hash,
            "markers": str(self.markers),
            "folders": STRAY_FOLDERS,
            "glob": MARKER_GLOB,
        }
        for name, container, extra in (
            ("backend", self.backend, {}),
            (
                "sandbox",
                self.sandbox,
                {
                    "other": str(self.other_workspace),
                    "alive": [self.backend_pid, self._listener_pid],
                },
            ),
        ):
            found = json.loads(self._python(container, CHECK, json.dumps({**check, **extra})))
            changed += [f"{name} container: {what}" for what in found]
        return changed

    def connections(self) -> int:
        return int(self._exec(self.sandbox, "cat", str(self._listener / "connections")).stdout)

    def _workspace(self, session_id: str) -> str:
        return str(WORKSPACES / session_id)

    def workspace_usage(self, session_id: str) -> int:
        sizes = []
        for apparent in ([], ["--apparent-size"]):
            du = self._exec(self.sandbox, "du", "-s", "-B1", *apparent, self._workspace(session_id))
            sizes.append(int(du.stdout.split()[0]))
        return max(sizes)

    def workspace_exists(self, session_id: str) -> bool:
        test = self._exec(self.sandbox, "test", "-e", self._workspace(session_id), check=False)
        return test.returncode == 0

    def workspace_files(self, session_id: str, pattern: str) -> list[str]:
        listed = self._python(self.sandbox, NAMES, self._workspace(session_id), pattern)
        return listed.split()

    def manifest_exists(self, session_id: str) -> bool:
        manifest = str(DATA_DIR / "workspace-manifests" / f"{session_id}.json")
        return self._exec(self.backend, "test", "-e", manifest, check=False).returncode == 0

    def _objects(self) -> list[Any]:
        return list(self._s3.list_objects(self._bucket, recursive=True))

    def biggest_object(self) -> int:
        stored = [o for o in self._objects() if o.object_name not in self._objects_before]
        return max((o.size or 0 for o in stored), default=0)

    def peak_memory_growth(self, during: Callable[[], T]) -> tuple[int, T]:
        # The backend is its container's pid 1 (`python -m app`: one process, uvicorn in it).
        # Writing 5 to clear_refs resets its VmHWM to its current RSS; the image's user owns
        # the process, so an exec as that user may.
        reset = "echo 5 > /proc/1/clear_refs && cat /proc/1/status"
        before = _status_kb(self._exec(self.backend, "sh", "-c", reset).stdout, "VmRSS")
        result = during()
        after = _status_kb(self._exec(self.backend, "cat", "/proc/1/status").stdout, "VmHWM")
        return (after - before) << 10, result

    def close(self) -> None:
        stop = f"import os; os.kill({self._listener_pid}, 15)"  # the image has no kill(1)
        self._exec(self.sandbox, "python", "-c", stop, check=False)
        for container in (self.backend, self.sandbox):
            self._exec(container, "rm", "-rf", str(REDTEAM), check=False)

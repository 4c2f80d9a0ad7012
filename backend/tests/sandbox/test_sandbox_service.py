"""The split-out sandbox service: workers started by another process, reached over a socket.

The service runs as its own process, as docker compose runs it; the backend's side is the
same `SandboxWorker`, given a `ServiceLauncher` instead of starting workers itself.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.sandbox import SandboxLimits, SandboxUnavailable, SandboxWorker, ServiceLauncher
from app.sandbox.protocol import FrameReader, write_message
from tests.support.sandbox_service import SandboxServiceProcess


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServiceProcess]:
    running = SandboxServiceProcess(tmp_path_factory.mktemp("service")).start()
    yield running
    running.stop()


def workspace(service: SandboxServiceProcess, name: str) -> Path:
    folder = service.workspaces / name
    folder.mkdir(exist_ok=True)
    return folder


def ask_service(path: Path, message: dict[str, object]) -> dict[str, object] | None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        write_message(sock.fileno(), message)
        reader = FrameReader(sock.fileno())
        try:
            return reader.read(time.monotonic() + 10)
        finally:
            reader.close()


def workers_of(service: SandboxServiceProcess) -> list[psutil.Process]:
    """The service's worker processes (not bubblewrap's, nor the fork server itself)."""
    assert service.process is not None
    workers = []
    for process in psutil.Process(service.process.pid).children(recursive=True):
        try:
            parent = process.parent()
            if process.name() == "bwrap":
                continue
            fork_server = "app.sandbox.worker.zygote" in " ".join(process.cmdline())
            if fork_server and parent is not None and parent.name() == "bwrap":
                continue
        except psutil.NoSuchProcess:
            continue
        workers.append(process)
    return workers


def test_the_probe_health_checks_use_says_whether_it_answers(
    service: SandboxServiceProcess, tmp_path: Path
) -> None:
    probe = [sys.executable, "-m", "app.sandbox.service", "--probe", "--socket"]
    assert subprocess.run([*probe, str(service.socket)], timeout=60).returncode == 0
    assert subprocess.run([*probe, str(tmp_path / "nothing.sock")], timeout=60).returncode == 1


def test_status_says_how_code_is_isolated_over_there(service: SandboxServiceProcess) -> None:
    status = service.launcher().status()
    assert (status.location, status.mechanism) == ("service", "bubblewrap")
    assert status.available and status.isolated
    assert "ptrace" in status.seccomp


def test_steps_keep_variables_and_see_the_session_workspace(
    service: SandboxServiceProcess,
) -> None:
    folder = workspace(service, "session-a")
    (folder / "sales.csv").write_text("region,amount\nnorth,10\nsouth,32\n")
    with SandboxWorker(folder, launcher=service.launcher()) as worker:
        first = worker.run("import pandas as pd\nsales = pd.read_csv('sales.csv')")
        assert first.error is None, first.error
        total = worker.run("print(sales['amount'].sum())\nsales.to_csv('out.csv')")
        assert (total.error, total.logs) == (None, "42\n")
        assert worker.isolation == "bubblewrap"
        (written,) = total.artifacts
        assert written.path == folder / "out.csv" and written.size > 0


def test_stopping_a_step_kills_the_worker_in_the_service(service: SandboxServiceProcess) -> None:
    with SandboxWorker(workspace(service, "session-b"), launcher=service.launcher()) as worker:
        worker.run("earlier = 1")
        assert workers_of(service)
        threading.Timer(0.5, worker.kill).start()
        result = worker.run("import time\ntime.sleep(60)")
        assert result.error == "The step was stopped."
        deadline = time.monotonic() + 10
        while workers_of(service) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert workers_of(service) == []
        gone = worker.run("earlier")  # a fresh worker
        assert gone.error is not None and "NameError" in gone.error


def test_a_step_over_its_quota_leaves_no_file_however_late_the_service_stops_it(
    service: SandboxServiceProcess,
) -> None:
    # The service is held still (as on a crowded machine) while the step writes on, over
    # its quota: the step's files may be removed only once its worker can write no more.
    folder = workspace(service, "session-f")
    limits = SandboxLimits(disk_mb=16)
    code = (
        "import io\nimport time\n"
        "io.open('waiting', 'wb').close()\n"
        "while True:\n"
        "    try:\n"
        "        io.open('go', 'rb').close()\n"
        "        break\n"
        "    except OSError:\n"
        "        time.sleep(0.01)\n"
        "for i in range(100000):\n"
        "    io.open(f'fill-{i}.csv', 'wb').write(b'x' * (1 << 20))\n"
        "    time.sleep(0.02)\n"
    )
    assert service.process is not None
    pid = service.process.pid
    with SandboxWorker(folder, launcher=service.launcher(), limits=limits) as worker:
        worker.start()
        results = []
        step = threading.Thread(target=lambda: results.append(worker.run(code)))
        step.start()
        while not (folder / "waiting").exists():
            time.sleep(0.01)
        os.kill(pid, signal.SIGSTOP)
        try:
            (folder / "go").touch()
            # Long past its quota (the backend looks every QUOTA_POLL_SECONDS): stopped by
            # the backend, but not yet by the service, it writes on.
            gives_up = time.monotonic() + 60
            while not (folder / "fill-60.csv").exists() and time.monotonic() < gives_up:
                time.sleep(0.01)
        finally:
            os.kill(pid, signal.SIGCONT)
        step.join()
        (result,) = results
        assert result.error is not None and "over its disk quota" in result.error
        assert sorted(p.name for p in folder.glob("fill-*")) == []
        assert worker.run("print(40 + 2)").logs == "42\n"


def test_a_step_past_its_time_limit_and_a_memory_bomb_are_reported(
    service: SandboxServiceProcess,
) -> None:
    limits = SandboxLimits(step_timeout_seconds=2, memory_mb=512)
    with SandboxWorker(
        workspace(service, "session-c"), launcher=service.launcher(), limits=limits
    ) as worker:
        slow = worker.run("import time\ntime.sleep(60)")
        assert slow.timed_out and slow.error is not None and "more than 2 s" in slow.error
        bomb = worker.run("x = 'x' * (600 * 1024 * 1024)")
        assert bomb.error is not None and "ran out of memory" in bomb.error
        assert worker.run("1 + 1").output == "2"


def test_workspaces_are_named_not_pathed(service: SandboxServiceProcess) -> None:
    for name in ("../service", "/etc", "", "a/b", ".."):
        reply = ask_service(service.socket, {"type": "spawn", "workspace": name})
        assert reply == {"type": "failed", "error": "no such workspace"}, name
    outside = service.workspaces.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    (service.workspaces / "linked").symlink_to(outside)
    reply = ask_service(service.socket, {"type": "spawn", "workspace": "linked"})
    assert reply == {"type": "failed", "error": "no such workspace"}
    with pytest.raises(ValueError):
        service.launcher().launch(outside.parent / "x.y", SandboxLimits())


def test_an_unreachable_service_disables_analysis_with_the_reason(tmp_path: Path) -> None:
    launcher = ServiceLauncher(tmp_path / "nobody-listens.sock")
    status = launcher.status()
    assert not status.available
    assert "does not answer" in status.detail and status.fix is not None
    with pytest.raises(SandboxUnavailable) as raised:
        SandboxWorker(tmp_path / "w", launcher=launcher).run("1 + 1")
    assert "does not answer" in str(raised.value)


def test_a_service_that_cannot_isolate_refuses_to_run_code(tmp_path: Path) -> None:
    broken = SandboxServiceProcess(tmp_path, "--bwrap", "/bin/false").start()
    try:
        launcher = broken.launcher()
        status = launcher.status()
        assert (status.available, status.isolated, status.mechanism) == (False, False, None)
        assert status.fix is not None
        folder = broken.workspaces / "session"
        folder.mkdir()
        with pytest.raises(SandboxUnavailable):
            SandboxWorker(folder, launcher=launcher).run("1 + 1")
        assert workers_of(broken) == []
    finally:
        broken.stop()

"""Limits and lifecycle: timeouts, memory, CPU time, stopping a step, threads, closing."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.sandbox import SandboxLimits, SandboxWorker
from app.sandbox.worker.session import WORKER_NICENESS
from tests.support.launch_modes import LAUNCH_MODES, worker_started

STEP_TIMEOUT = 2.0


@pytest.fixture(scope="module", params=LAUNCH_MODES)
def worker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxWorker]:
    # Shared: tests that kill the worker rely on run() starting a fresh one.
    limits = SandboxLimits(step_timeout_seconds=STEP_TIMEOUT, memory_mb=1024)
    folder = tmp_path_factory.mktemp("workspaces")
    with worker_started(request.param, folder, limits) as worker:
        yield worker


@pytest.fixture(scope="module", params=LAUNCH_MODES)
def roomy(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxWorker]:
    # No tight time limit: on a busy machine a limit must be reached by what it measures,
    # never by a step that merely ran slowly.
    limits = SandboxLimits(step_timeout_seconds=600, memory_mb=1024, disk_mb=32)
    folder = tmp_path_factory.mktemp("workspaces")
    with worker_started(request.param, folder, limits) as worker:
        yield worker


def assert_fresh_worker_works(worker: SandboxWorker) -> None:
    gone = worker.run("earlier")
    assert gone.error is not None and "NameError" in gone.error
    assert worker.run("1 + 1").output == "2"


@pytest.mark.parametrize(
    "code",
    [
        # Interpreted Python (the inner loop keeps smolagents' own loop cap out of reach).
        "while True:\n    for i in range(1000):\n        pass",
        # Stuck in C.
        "import time\ntime.sleep(1000)",
    ],
    ids=["python-loop", "sleep"],
)
def test_step_timeout_kills_the_worker_and_the_next_run_starts_afresh(
    worker: SandboxWorker, code: str
) -> None:
    worker.run("earlier = 1")
    started = time.monotonic()
    result = worker.run(code)
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert not result.crashed
    assert result.error is not None
    assert "ran for more than 2 s and was stopped" in result.error
    assert "variables from earlier steps are gone" in result.error
    assert elapsed >= STEP_TIMEOUT
    assert not worker.alive
    assert_fresh_worker_works(worker)


@pytest.mark.parametrize(
    "code",
    [
        "x = 'x' * 10**11",
        "import numpy as np\nx = np.ones((10**6, 10**5))",
        # 50 MB at a time until the limit is reached.
        "import numpy as np\nchunks = []\n"
        "for i in range(100):\n    chunks.append(np.ones(50 * 2**17))",
    ],
    ids=["string", "numpy", "gradual"],
)
def test_memory_bomb_is_a_clear_error(roomy: SandboxWorker, code: str) -> None:
    roomy.run("earlier = 1")
    result = roomy.run(code)
    assert result.error is not None
    assert "ran out of memory (limit 1024 MB)" in result.error
    # The worker survived; a new step works and even keeps the variables.
    assert roomy.run("earlier + 1").output == "2"


def test_a_full_workspace_stops_the_step_and_removes_what_it_wrote(roomy: SandboxWorker) -> None:
    kept = roomy.run("import numpy as np\nnp.zeros(4 << 20, dtype=np.uint8).tofile('kept.bin')")
    assert kept.error is None, kept.error
    flood = roomy.run(
        "for i in range(6):\n    np.zeros(8 << 20, dtype=np.uint8).tofile(f'part-{i}.bin')"
    )
    assert flood.error is not None
    assert "over its disk quota (32 MB, SANDBOX_DISK_MB)" in flood.error
    names = sorted(p.name for p in roomy.workspace.iterdir() if not p.name.startswith("."))
    assert names == ["kept.bin"]
    # A step that keeps writing is stopped while it runs, not only when it ends.
    endless = roomy.run(
        "import time\nimport numpy as np\ni = 0\nwhile True:\n"
        "    np.zeros(1 << 20, dtype=np.uint8).tofile(f'more-{i}.bin')\n"
        "    i += 1\n    time.sleep(0.01)"
    )
    assert endless.error is not None and "disk quota" in endless.error
    names = sorted(p.name for p in roomy.workspace.iterdir() if not p.name.startswith("."))
    assert names == ["kept.bin"]
    assert roomy.run("1 + 1").output == "2"


def test_a_flood_of_results_is_capped_with_a_notice(roomy: SandboxWorker) -> None:
    result = roomy.run(
        "import pandas as pd\nfor i in range(3000):\n    display(pd.DataFrame({'i': [i]}))"
    )
    assert result.error is None, result.error
    assert len(result.artifacts) == 50
    assert "2975 more charts, tables or files were not kept: a step keeps at most 50" in (
        result.logs
    )


def test_the_system_call_filter_is_on_for_every_thread(roomy: SandboxWorker) -> None:
    status = roomy.run("import io\nio.open('/proc/self/status').read()").output or ""
    assert "NoNewPrivs:\t1" in status
    assert "Seccomp:\t2" in status


@pytest.mark.parametrize("mode", LAUNCH_MODES)
def test_cpu_time_limit_ends_the_worker(tmp_path: Path, mode: str) -> None:
    # Start-up uses about a second of CPU (none when forked); a C-level busy loop uses up
    # the rest.
    limits = SandboxLimits(cpu_seconds=3, step_timeout_seconds=60)
    with worker_started(mode, tmp_path, limits) as worker:
        worker.run("earlier = 1")
        result = worker.run("sum(range(10**12))")
        assert result.crashed
        assert result.error is not None
        assert "CPU time limit (3 s)" in result.error
        assert_fresh_worker_works(worker)


def test_kill_stops_a_running_step(worker: SandboxWorker) -> None:
    worker.run("earlier = 1")
    threading.Timer(0.5, worker.kill).start()
    result = worker.run("import time\ntime.sleep(1000)")
    assert result.error == "The step was stopped."
    assert not result.timed_out
    assert_fresh_worker_works(worker)


def test_close_ends_the_worker(tmp_path: Path) -> None:
    worker = SandboxWorker(tmp_path)
    worker.start()
    assert worker.alive
    worker.close()
    assert not worker.alive


def test_worker_outlives_the_thread_that_started_it(tmp_path: Path) -> None:
    # The backend starts workers from short-lived threads; bubblewrap's --die-with-parent
    # is tied to the starting thread, which must not end the session's worker.
    with SandboxWorker(tmp_path) as worker:
        starter = threading.Thread(target=worker.run, args=("kept = 5",))
        starter.start()
        starter.join()
        time.sleep(1)
        assert worker.alive
        assert worker.run("kept").output == "5"


def test_analysis_code_runs_at_a_lower_priority_than_the_backend(roomy: SandboxWorker) -> None:
    stat = roomy.run("import io\nio.open('/proc/self/stat').read()").output or ""
    niceness = int(stat.rsplit(")", 1)[1].split()[16])  # field 19 of proc(5)
    assert niceness == min(19, os.nice(0) + WORKER_NICENESS)

"""The fork server: workers forked in milliseconds, each as isolated as a worker of its own.

Two sessions' workers come from one fork server that sees every workspace; the tests try
to reach the other session from inside with what the executor lets through (pandas and
io readers) and look at the host. Isolation and limits in general are tested for forked
workers too (test_sandbox_isolation.py and test_sandbox_limits.py run both ways).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.sandbox import LocalLauncher, SandboxLimits, SandboxWorker
from app.sandbox import forkserver as forkserver_module
from app.sandbox.forkserver import ForkedChannel
from app.sandbox.isolation import Launch
from app.sandbox.transport import ProcessChannel

BOB_SECRET = "bob-only-7d1c55"

# Every path by which one process could reach another's files through /proc.
LOOK_FOR_BOB = """
import io
found = []
candidates = ['/run/workbench-workspaces/bob/secret.csv', '/proc/self/root/workspace/mine.csv']
for pid in range(1, 400):
    for path in ('root/workspace', 'cwd', 'root/run/workbench-workspaces/bob'):
        candidates.append(f'/proc/{pid}/{path}/secret.csv')
for path in candidates:
    try:
        found.append(path + ': ' + io.open(path).read())
    except Exception:
        pass
found
"""


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[LocalLauncher]:
    launcher = LocalLauncher(workspaces=tmp_path)
    yield launcher
    launcher.close()


def session(launcher: LocalLauncher, folder: Path, name: str) -> SandboxWorker:
    workspace = folder / name
    workspace.mkdir()
    return SandboxWorker(workspace, launcher=launcher, limits=SandboxLimits(memory_mb=1024))


def test_forked_workers_see_only_their_own_session(launcher: LocalLauncher, tmp_path: Path) -> None:
    alice, bob = session(launcher, tmp_path, "alice"), session(launcher, tmp_path, "bob")
    (tmp_path / "alice" / "mine.csv").write_text("a,b\n1,2\n")
    (tmp_path / "bob" / "secret.csv").write_text(f"{BOB_SECRET}\n")
    with alice, bob:
        assert bob.run("import pandas as pd\npd.read_csv('secret.csv').columns[0]").output == (
            BOB_SECRET
        )
        mine = alice.run("import pandas as pd\nint(pd.read_csv('mine.csv')['b'][0])")
        assert mine.output == "2"
        assert isinstance(alice._channel, ForkedChannel)
        assert isinstance(bob._channel, ForkedChannel)
        # Bob's worker is alive and holds his folder while Alice looks everywhere for it.
        found = alice.run(LOOK_FOR_BOB)
        assert found.error is None
        # Her own file is found the same way (the reads work); nothing of Bob's is.
        assert found.output == "['/proc/self/root/workspace/mine.csv: a,b\\n1,2\\n']"
        assert BOB_SECRET not in (found.output or "")
        # The folder of all workspaces is covered, read-only, for both.
        for worker in (alice, bob):
            write = worker.run(
                "import pandas as pd\n"
                "pd.DataFrame({'x': [1]}).to_csv('/run/workbench-workspaces/bob/planted.csv')"
            )
            assert write.error is not None
        # Each has a /tmp of its own.
        alice.run("import pandas as pd\npd.DataFrame({'x': [1]}).to_csv('/tmp/alice.csv')")
        assert alice.run("import pandas as pd\nlen(pd.read_csv('/tmp/alice.csv'))").output == "1"
        peek = bob.run("import pandas as pd\npd.read_csv('/tmp/alice.csv')")
        assert peek.error is not None and "No such file" in peek.error
        # Forked from one process, they still draw different random numbers.
        draw = "import numpy as np\nfloat(np.random.rand())"
        assert alice.run(draw).output != bob.run(draw).output
        # Nothing was left on the host outside their folders (and their folders of project
        # files, bound read-only: empty here).
        assert sorted(p.name for p in tmp_path.iterdir()) == [".files", "alice", "bob"]
        files = tmp_path / ".files"
        assert sorted(p.name for p in files.iterdir()) == ["alice", "bob"]
        assert not any((files / "alice").iterdir()) and not any((files / "bob").iterdir())


def test_a_forked_worker_imports_what_the_fork_server_had_not_loaded(
    launcher: LocalLauncher, tmp_path: Path
) -> None:
    # The worker's /tmp is new: where the runtime itself lives under /tmp (a checkout or a
    # virtualenv there, as in CI), it must still be readable beneath it.
    with session(launcher, tmp_path, "s1") as worker:
        fitted = worker.run(
            "from sklearn.linear_model import LinearRegression\n"
            "import scipy.stats\n"
            "round(float(LinearRegression().fit([[0], [1], [2]], [1, 3, 5]).coef_[0]), 3)"
        )
        assert fitted.error is None
        assert fitted.output == "2.0"
        assert isinstance(worker._channel, ForkedChannel)


def test_a_chart_shown_in_a_forked_worker_is_shown_where_the_code_shows_it(
    launcher: LocalLauncher, tmp_path: Path
) -> None:
    # The fork server builds the executor's copies of pyplot & co. before forking: they
    # must hold the showing hooks, or plt.show() would do nothing and the chart would only
    # turn up, out of order, at the end of the step.
    with session(launcher, tmp_path, "s1") as worker:
        shown = worker.run(
            "import matplotlib.pyplot as plt\nimport pandas as pd\n"
            "plt.plot([1, 2, 3], [3, 1, 2])\nplt.show()\n"
            "display(pd.DataFrame({'a': [1, 2]}))"
        )
        assert shown.error is None
        assert [a.kind for a in shown.artifacts] == ["image", "table", "file"]
        assert isinstance(worker._channel, ForkedChannel)


def test_a_forked_worker_has_no_capabilities_and_its_filter(
    launcher: LocalLauncher, tmp_path: Path
) -> None:
    with session(launcher, tmp_path, "s1") as worker:
        status = worker.run("import io\nio.open('/proc/self/status').read()").output or ""
        assert isinstance(worker._channel, ForkedChannel)
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    assert fields["CapEff"] == fields["CapPrm"] == fields["CapAmb"] == "0000000000000000"
    assert fields["NoNewPrivs"] == "1"
    assert fields["Seccomp"] == "2"
    assert fields["Uid"].split()[0] == "65534"


def test_a_worker_killed_from_outside_is_reported_and_a_new_one_forked(
    launcher: LocalLauncher, tmp_path: Path
) -> None:
    with session(launcher, tmp_path, "s1") as worker:
        worker.run("earlier = 1")
        channel = worker._channel
        assert isinstance(channel, ForkedChannel)
        signal.pidfd_send_signal(channel._pidfd, signal.SIGKILL)
        result = worker.run("1")
        assert result.crashed
        assert result.error is not None and "ran out of memory (limit 1024 MB)" in result.error
        gone = worker.run("earlier")
        assert gone.error is not None and "NameError" in gone.error
        assert worker.run("2 + 2").output == "4"
        assert isinstance(worker._channel, ForkedChannel)


def test_a_dead_fork_server_is_replaced(launcher: LocalLauncher, tmp_path: Path) -> None:
    with session(launcher, tmp_path, "s1") as first:
        assert first.run("kept = 5").error is None
        server = launcher._fork_server
        assert server is not None and server._process is not None
        os.killpg(server._process.pid, signal.SIGKILL)
        server._process.wait()
        # Its workers go with it, each once the kernel has taken its namespace down: that
        # takes its own time on a busy machine, so wait for it (a step sent before would
        # still be answered, rightly).
        hung = time.monotonic() + 120  # not a deadline: what a worker that never goes is
        while first.alive and time.monotonic() < hung:
            time.sleep(0.05)
        assert not first.alive, "the fork server's worker outlived it"
        # The session is told and gets a new worker.
        lost = first.run("kept")
        assert lost.crashed or (lost.error is not None and "NameError" in lost.error)
        assert first.run("3 * 3").output == "9"
        assert isinstance(first._channel, ForkedChannel)
    with session(launcher, tmp_path, "s2") as second:
        assert second.run("1 + 1").output == "2"
        assert isinstance(second._channel, ForkedChannel)


def test_a_fork_server_that_cannot_start_gives_way_to_ordinary_workers(
    launcher: LocalLauncher,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A host where the fork server's own sandbox fails (say, no nested user namespaces).
    def broken(*args: object) -> Launch:
        return Launch(
            ["/bin/sh", "-c", "echo 'no namespaces here' >&2; exit 1"], {}, tmp_path, None
        )

    monkeypatch.setattr(forkserver_module, "build_fork_server_launch", broken)
    with (
        caplog.at_level(logging.WARNING, logger="app.sandbox"),
        session(launcher, tmp_path, "s1") as worker,
    ):
        assert worker.run("6 * 7").output == "42"
        assert isinstance(worker._channel, ProcessChannel)
    assert "the fork server did not start" in caplog.text
    assert "no namespaces here" in caplog.text


def test_a_workspace_outside_the_folder_starts_from_scratch(
    launcher: LocalLauncher, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    with SandboxWorker(elsewhere, launcher=launcher) as worker:
        assert worker.run("1 + 1").output == "2"
        assert isinstance(worker._channel, ProcessChannel)
    assert launcher._fork_server is None


def test_a_host_without_nested_user_namespaces_gets_ordinary_workers_for_good(
    launcher: LocalLauncher,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # bubblewrap's --disable-userns is what such a host amounts to for the fork server.
    build = forkserver_module.build_fork_server_launch

    def without_user_namespaces(*args: Any) -> Launch:
        launch = build(*args)
        return dataclasses.replace(
            launch, argv=[launch.argv[0], "--disable-userns", *launch.argv[1:]]
        )

    monkeypatch.setattr(forkserver_module, "build_fork_server_launch", without_user_namespaces)
    with caplog.at_level(logging.WARNING, logger="app.sandbox"):
        with session(launcher, tmp_path, "s1") as first:
            assert first.run("6 * 7").output == "42"
            assert isinstance(first._channel, ProcessChannel)
        with session(launcher, tmp_path, "s2") as second:
            assert second.run("1").output == "1"
            assert isinstance(second._channel, ProcessChannel)
    assert "forked workers cannot be isolated on this host" in caplog.text
    # Tried once: the host will not change its mind.
    assert caplog.text.count("cannot be isolated") == 1

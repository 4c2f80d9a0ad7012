"""Which of the workspace's files a step read, as the sandbox reports it: whatever library
read them (pandas, DuckDB and pyarrow through C++), under whatever name the code computed,
in every way a worker starts (bubblewrap, the fork server, the rlimits fallback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.sandbox import LocalLauncher, SandboxLimits, SandboxWorker, StepResult
from app.sandbox.probe import probe

SALES = "region,amount\nnorth,10\nsouth,32\n"


@pytest.fixture(scope="module", params=["bubblewrap", "fork server", "rlimits"])
def worker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxWorker]:
    folder = tmp_path_factory.mktemp("workspaces")
    workspace = folder / "session"
    workspace.mkdir()
    (workspace / "sales.csv").write_text(SALES)
    (workspace / "costs.csv").write_text("region,cost\nnorth,3\n")
    (workspace / "notes.txt").write_text("nothing to see\n")
    probe.cache_clear()  # probed once per process, per policy
    launcher = {
        "bubblewrap": lambda: LocalLauncher(),
        "fork server": lambda: LocalLauncher(workspaces=folder),
        "rlimits": lambda: LocalLauncher("none"),
    }[request.param]()
    with SandboxWorker(
        workspace, launcher=launcher, limits=SandboxLimits(memory_mb=1024)
    ) as worker:
        worker.start()
        expected = "rlimits" if request.param == "rlimits" else "bubblewrap"
        assert worker.isolation == expected
        yield worker
    launcher.close()
    probe.cache_clear()


def ok(worker: SandboxWorker, code: str) -> StepResult:
    result = worker.run(code)
    assert result.error is None, result.error
    return result


def test_a_globbed_name_read_with_pandas_counts(worker: SandboxWorker) -> None:
    result = ok(
        worker,
        "import duckdb\nimport pandas as pd\n"
        "names = [row[0] for row in duckdb.sql(\"select file from glob('s*.csv')\").fetchall()]\n"
        "frames = [pd.read_csv(name) for name in names]\n",
    )
    assert result.reads == ("sales.csv",)


def test_duckdb_reading_a_path_in_a_variable_counts(worker: SandboxWorker) -> None:
    result = ok(
        worker,
        "import duckdb\npath = 'co' + 'sts.csv'\n"
        "rows = duckdb.sql(f\"select * from read_csv_auto('{path}')\").fetchall()\n",
    )
    assert result.reads == ("costs.csv",)


def test_pyarrow_reads_count(worker: SandboxWorker) -> None:
    result = ok(worker, "import pyarrow.csv as pc\ntable = pc.read_csv('sales.csv')\n")
    assert result.reads == ("sales.csv",)


def test_a_name_in_a_comment_is_not_a_read(worker: SandboxWorker) -> None:
    result = ok(worker, "# read sales.csv and notes.txt later\nx = 1\n")
    assert result.reads == ()


def test_files_the_code_wrote_are_not_reads(worker: SandboxWorker) -> None:
    result = ok(
        worker,
        "import pandas as pd\n"
        "pd.read_csv('sales.csv').to_csv('copy.csv', index=False)\n"
        "again = pd.read_csv('copy.csv')\n"
        "import io\nwith io.open('notes.txt', 'a') as f:\n    f.write('more')\n",
    )
    assert result.reads == ("sales.csv",)


def test_each_step_reports_its_own_reads(worker: SandboxWorker) -> None:
    assert ok(worker, "import io\nio.open('notes.txt').read()").reads == ("notes.txt",)
    result = ok(worker, "y = 2")
    assert result.reads == ()


def test_only_the_project_files_asked_about_are_reported(worker: SandboxWorker) -> None:
    worker.project_files = ("sales.csv", "costs.csv")
    try:
        result = ok(
            worker,
            "import io\nfor i in range(600):\n    io.open(f'mine-{i}.txt', 'w').close()\n",
        )
        result = ok(
            worker,
            "import io\n"
            "for i in range(600):\n    io.open(f'mine-{i}.txt').read()\n"
            "io.open('notes.txt').read()\nio.open('sales.csv').read()\n",
        )
        assert result.reads == ("sales.csv",)
    finally:
        worker.project_files = None

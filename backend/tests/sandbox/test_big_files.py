"""Files bigger than the worker's memory: DuckDB answers over them, spilling inside the
workspace within its quota; pandas fails with the message that says to use DuckDB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from app.sandbox import SandboxLimits, SandboxWorker, hostfs
from app.sandbox.layout import SPILL_DIR
from tests.support.launch_modes import LAUNCH_MODES, worker_started

# A worker of 1 GB has about 400-600 MB of address space left once Python, pandas and
# DuckDB are loaded; the table below takes more than that in pandas, and several times
# DuckDB's share of it.
MEMORY_MB = 1024
ROWS = 12_000_000
REGIONS = 17


def write_tables(folder: Path) -> None:
    """sales.csv (about 500 MB) and sales.parquet, written by DuckDB in seconds."""
    con = duckdb.connect(config={"threads": 2})
    con.execute("SET enable_progress_bar = false")
    rows = (
        f"SELECT i AS id, 'region-' || (i % {REGIONS}) AS region, (i % 1000) / 10.0 AS amount,"
        f" 'note ' || (i % 13) || ', checked' AS note FROM range({ROWS}) t(i)"
    )
    con.execute(f"COPY ({rows}) TO '{folder / 'sales.csv'}' (HEADER)")
    con.execute(f"COPY ({rows}) TO '{folder / 'sales.parquet'}'")
    con.close()


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tables")
    write_tables(folder)
    return folder


def link_tables(tables: Path, workspace: Path) -> None:
    for name in ("sales.csv", "sales.parquet"):
        (workspace / name).hardlink_to(tables / name)


@pytest.fixture(scope="module", params=LAUNCH_MODES)
def worker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tables: Path
) -> Iterator[SandboxWorker]:
    # No tight time limit: a busy machine must not turn a slow step into a failure.
    limits = SandboxLimits(memory_mb=MEMORY_MB, step_timeout_seconds=600, disk_mb=8192)
    folder = tmp_path_factory.mktemp("workspaces")
    with worker_started(request.param, folder, limits) as worker:
        link_tables(tables, worker.workspace)
        yield worker


def ok(worker: SandboxWorker, code: str) -> str:
    result = worker.run(code)
    assert result.error is None, result.error
    return (result.output or "") + result.logs


def spill_files(workspace: Path) -> list[Path]:
    return [path for path in (workspace / SPILL_DIR).rglob("*.tmp")]


@pytest.mark.parametrize("name", ["sales.csv", "sales.parquet"])
def test_duckdb_groups_a_file_bigger_than_memory(worker: SandboxWorker, name: str) -> None:
    out = ok(
        worker,
        "import duckdb\n"
        f"totals = duckdb.sql(\"SELECT region, count(*) AS n FROM '{name}' GROUP BY 1\").df()\n"
        "print(len(totals), totals['n'].sum())",
    )
    assert out.split() == [str(REGIONS), str(ROWS)]
    # Its memory limit is a share of what the worker has left, not of the machine.
    settings = ok(
        worker,
        "print(duckdb.sql(\"SELECT current_setting('memory_limit'), "
        "current_setting('autoinstall_known_extensions')\").fetchall())",
    )
    limit = float(settings.split("'")[1].split()[0])
    assert 64 <= limit < MEMORY_MB / 2, settings
    assert "False" in settings


def test_spills_stay_in_the_workspace_and_go_when_no_database_needs_them(
    worker: SandboxWorker,
) -> None:
    # A table bigger than DuckDB's memory limit spills; the code sees where.
    out = ok(
        worker,
        "import duckdb\ncon = duckdb.connect()\n"
        "con.execute(\"CREATE TABLE t AS SELECT * FROM 'sales.csv'\")\n"
        "for path, size in con.sql('SELECT path, size FROM duckdb_temporary_files()')"
        ".fetchall():\n    print(path, size)",
    )
    spilled = [line.split()[0] for line in out.splitlines()]
    assert spilled, "nothing was spilled"
    inside = f"{worker.workspace}/{SPILL_DIR}/" if worker.isolation != "bubblewrap" else None
    for path in spilled:
        assert path.startswith(inside or f"/workspace/{SPILL_DIR}/"), path
    # While the database is open its spills are its data: they stay, inside the workspace.
    assert spill_files(worker.workspace)
    assert ok(worker, "print(con.sql('SELECT count(*) FROM t').fetchall()[0][0])").strip() == str(
        ROWS
    )
    # Dropped: gone by the end of the step.
    ok(worker, "del con")
    assert spill_files(worker.workspace) == []


# Last of the tests on this worker: a read that fails for want of memory leaves some of the
# address space taken (glibc and pyarrow keep it), which the tests above need.
@pytest.mark.parametrize(
    "code",
    ["pd.read_csv('sales.csv')", "pd.read_parquet('sales.parquet')"],
    ids=["csv", "parquet"],
)
def test_pandas_runs_out_of_memory_and_is_told_to_use_duckdb(
    worker: SandboxWorker, code: str
) -> None:
    worker.run("kept = 1")
    result = worker.run(f"import pandas as pd\nsales = {code}")
    assert result.error is not None
    assert f"ran out of memory (limit {MEMORY_MB} MB)" in result.error
    assert "duckdb.sql(" in result.error
    # The worker lives on, variables and all.
    assert worker.run("kept + 1").output == "2"


def test_a_spill_past_the_disk_quota_ends_as_the_quota_error(tmp_path: Path, tables: Path) -> None:
    # Room for the tables and 64 MB more: the spill of the whole table cannot fit.
    workspace_mb = (hostfs.usage(tables).bytes >> 20) + 64
    limits = SandboxLimits(memory_mb=MEMORY_MB, step_timeout_seconds=600, disk_mb=workspace_mb)
    with worker_started("fork", tmp_path, limits) as worker:
        link_tables(tables, worker.workspace)
        worker.run("kept = 1")
        result = worker.run(
            "import duckdb\ncon = duckdb.connect()\n"
            "con.execute(\"CREATE TABLE t AS SELECT * FROM 'sales.csv'\")"
        )
        assert result.error is not None
        assert f"over its disk quota ({workspace_mb} MB, SANDBOX_DISK_MB)" in result.error
        assert not (worker.workspace / SPILL_DIR).exists() or spill_files(worker.workspace) == []
        assert worker.run("1 + 1").output == "2"

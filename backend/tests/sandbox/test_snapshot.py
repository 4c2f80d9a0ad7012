"""Session snapshots in the sandbox: what a worker saves, and what a new worker gets back.

Each test fills a worker's namespace through real code steps, has it snapshot the
variables into the workspace, and starts another worker on the same workspace (what an
eviction, a crash or a move to another replica comes down to): its code sees the values
again, and the note before its first step says what was restored and what was not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.sandbox import SandboxLimits, SandboxWorker, StepResult
from app.sandbox.snapshot_format import MANIFEST, SNAPSHOT_DIR, RestoreReport, SnapshotReport

BUDGET = 1 << 30

VARIABLES = """
import datetime
import decimal
import numpy as np
import pandas as pd
import plotly.express as px
from sklearn.linear_model import LinearRegression

sales = pd.DataFrame(
    {"region": ["North", "South", None], 2024: [1.5, 2.5, 3.5]},
    index=pd.Index(["a", "b", "c"], name="key"),
)
wide = pd.DataFrame([[1, 2], [3, 4]], columns=pd.MultiIndex.from_tuples([("x", 1), ("x", 2)]))
ranged = pd.DataFrame({"v": range(5)}, index=pd.RangeIndex(10, 20, 2, name="row"))
amounts = pd.Series([10, 20, 30], name="amount", dtype="int32")
grid = np.arange(12, dtype=np.float32).reshape(3, 4)
settings = {
    "name": "Q1", "weights": (0.5, 0.25), "tags": {"a", "b"}, 7: "seven",
    "missing": float("nan"), "$odd": None, "big": 10**30, "raw": b"\\x00\\xff",
    "price": decimal.Decimal("1.10"), "when": datetime.datetime(2026, 1, 2, 3, 4, 5),
    "day": datetime.date(2026, 1, 2), "span": datetime.timedelta(days=1, seconds=2),
    "stamp": pd.Timestamp("2026-01-02 03:04:05", tz="UTC"), "count": np.int64(7),
    "z": complex(1, -2),
}
chart = px.bar(x=["a", "b"], y=[1, 2])
model = LinearRegression().fit([[0], [1]], [0, 1])
def double(x):
    return 2 * x
"""

CHECK = """
print(sales.loc["b", 2024], list(sales.columns), sales.index.name, sales.loc["c", "region"])
print(wide.columns.tolist(), wide.values.sum())
print(list(ranged.index), ranged.index.name)
print(amounts.name, amounts.dtype, amounts.sum())
print(grid.dtype, grid.shape, grid[2, 3])
print(settings == {
    "name": "Q1", "weights": (0.5, 0.25), "tags": {"a", "b"}, 7: "seven",
    "missing": settings["missing"], "$odd": None, "big": 10**30, "raw": b"\\x00\\xff",
    "price": decimal.Decimal("1.10"), "when": datetime.datetime(2026, 1, 2, 3, 4, 5),
    "day": datetime.date(2026, 1, 2), "span": datetime.timedelta(days=1, seconds=2),
    "stamp": pd.Timestamp("2026-01-02 03:04:05", tz="UTC"), "count": np.int64(7),
    "z": complex(1, -2),
})
print(settings["missing"] != settings["missing"], isinstance(settings["count"], np.int64))
print(chart.data[0].y.tolist(), round(LinearRegression().fit([[0], [2]], [0, 1]).coef_[0], 6))
"""


def ok(worker: SandboxWorker, code: str) -> StepResult:
    result = worker.run(code)
    assert result.error is None, result.error
    return result


def restart(workspace: Path, **limits: float) -> SandboxWorker:
    worker = SandboxWorker(workspace, limits=SandboxLimits(**limits))  # type: ignore[arg-type]
    worker.start()
    return worker


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def test_a_new_worker_gets_the_variables_back_as_they_were(workspace: Path) -> None:
    with SandboxWorker(workspace) as first:
        ok(first, VARIABLES)
        before = ok(first, CHECK).logs
        report = first.snapshot(BUDGET)
    assert report.changed
    kinds = {v.name: v.kind for v in report.variables}
    assert kinds == {
        "sales": "frame",
        "wide": "frame",
        "ranged": "frame",
        "amounts": "series",
        "grid": "array",
        "settings": "value",
        "chart": "plotly",
        "datetime": "import",
        "decimal": "import",
        "np": "import",
        "pd": "import",
        "px": "import",
        "LinearRegression": "import",
    }
    assert {(u.name, u.reason) for u in report.unsaved} == {
        ("model", "not_data"),
        ("double", "defined_in_code"),
    }
    sales = next(v for v in report.variables if v.name == "sales")
    assert sales.describe() == "sales (DataFrame, 3 rows, 2 columns)"

    with restart(workspace) as second:
        restored = second.take_restore_report()
        assert restored is not None and restored.failed == () and restored.error is None
        assert set(restored.restored) == set(kinds)
        assert restored.lost == [
            "model (LinearRegression)",
            "double (a function defined in the code)",
        ]
        after = ok(second, CHECK).logs
    assert after == before
    assert after.splitlines() == [
        "2.5 ['region', 2024] key nan",
        "[('x', 1), ('x', 2)] 10",
        "[10, 12, 14, 16, 18] row",
        "amount int32 60",
        "float32 (3, 4) 11.0",
        "True",
        "True True",
        "[1, 2] 0.5",
    ]


def test_the_note_comes_before_the_first_step_when_nobody_read_it(workspace: Path) -> None:
    with SandboxWorker(workspace) as first:
        ok(first, "import numpy as np\ntotal = 42\nfrom sklearn.linear_model import Ridge")
        ok(first, "m = Ridge()")
        first.snapshot(BUDGET)
    with SandboxWorker(workspace) as second:
        result = ok(second, "print(total)")
    assert result.logs.splitlines() == [
        "[A new sandbox was started for this session. Restored from the end of the last "
        "question: np, total, Ridge. Not kept: m (Ridge); compute them again if needed.]",
        "42",
    ]


def test_nothing_is_written_again_when_no_code_ran(workspace: Path) -> None:
    with SandboxWorker(workspace) as worker:
        ok(worker, "x = 1")
        assert worker.snapshot(BUDGET).changed
        manifest = (workspace / SNAPSHOT_DIR / MANIFEST).stat().st_mtime_ns
        assert not worker.snapshot(BUDGET).changed
        ok(worker, "x = 2")
        assert worker.snapshot(BUDGET).changed
    assert (workspace / SNAPSHOT_DIR / MANIFEST).stat().st_mtime_ns >= manifest
    with restart(workspace) as worker:
        assert ok(worker, "print(x)").logs.splitlines()[-1] == "2"


def test_what_does_not_fit_the_budget_is_left_out_and_the_rest_kept(workspace: Path) -> None:
    with SandboxWorker(workspace) as worker:
        ok(worker, "import numpy as np\nsmall = np.zeros(10)\nbig = np.zeros(2_000_000)\nn = 3")
        report = worker.snapshot(1 << 20)  # 1 MB: `big` is 16 MB
    assert {v.name for v in report.variables} == {"np", "small", "n"}
    assert [u.describe() for u in report.unsaved] == ["big (ndarray, too large to keep)"]
    assert report.bytes < 1 << 20


def test_a_tampered_snapshot_is_never_unpickled(workspace: Path, tmp_path: Path) -> None:
    """The code controls the workspace: a snapshot file it swapped for a pickle stays data."""
    marker = tmp_path / "unpickled"
    with SandboxWorker(workspace) as worker:
        ok(worker, "import numpy as np\nsafe = 1\narr = np.arange(3)")
        report = worker.snapshot(BUDGET)
    array_file = next(v.file for v in report.variables if v.name == "arr")

    class Exploit:
        def __reduce__(self) -> tuple[object, tuple[str, str]]:
            return (open, (str(marker), "w"))

    payload = np.empty(1, dtype=object)
    payload[0] = Exploit()
    with open(workspace / SNAPSHOT_DIR / array_file, "wb") as handle:
        np.save(handle, payload, allow_pickle=True)
    with restart(workspace) as worker:
        restored = worker.take_restore_report()
        assert restored is not None
        assert "safe" in restored.restored and "arr" not in restored.restored
        assert [name for name, _ in restored.failed] == ["arr"]
        assert "pickle" in restored.failed[0][1].lower()
    assert not marker.exists()


def test_a_variable_too_big_to_load_is_reported_and_the_rest_restored(workspace: Path) -> None:
    with SandboxWorker(workspace) as worker:
        ok(worker, "import numpy as np\nkept = 5\nhuge = np.zeros(4)")
        report = worker.snapshot(BUDGET)
    huge = next(v.file for v in report.variables if v.name == "huge")
    # Planted: a 4 GB array file, sparse on disk, beyond the worker's 2 GB of memory.
    path = workspace / SNAPSHOT_DIR / huge
    path.unlink()
    np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(1 << 29,)).flush()
    with restart(workspace) as worker:
        restored = worker.take_restore_report()
        assert restored is not None
        assert "kept" in restored.restored
        assert restored.lost == ["huge (could not be loaded)"]
        assert ok(worker, "print(kept)").logs.strip() == "5"


def test_a_step_that_times_out_comes_back_with_the_last_snapshot(workspace: Path) -> None:
    with SandboxWorker(workspace, limits=SandboxLimits(step_timeout_seconds=5)) as worker:
        ok(worker, "saved = 'from the last question'")
        worker.snapshot(BUDGET)
        ok(worker, "made_now = 1")
        result = worker.run("import time\nwhile True:\n    time.sleep(0.5)")
        assert result.timed_out
        assert "those saved at the end of the last question are restored" in (result.error or "")
        after = worker.run("print(saved)\nprint(made_now)")
    assert after.logs.startswith(
        "[A new sandbox was started for this session. Restored from the end of the last "
        "question: saved.]\nfrom the last question\n"
    )
    assert "made_now" in (after.error or "")


def test_the_backend_rejects_a_report_it_cannot_trust() -> None:
    good = {
        "type": "snapshot",
        "changed": True,
        "files": [{"name": "manifest.json", "size": 10}, {"name": "v0.json", "size": 3}],
        "variables": [{"name": "x", "kind": "value", "type": "int", "file": "v0.json"}],
        "unsaved": [{"name": "m", "type": "<script>", "reason": "anything"}],
    }
    report = SnapshotReport.from_message(good)
    assert report.unsaved[0].type == "object" and report.unsaved[0].reason == "not_data"
    assert SnapshotReport.from_record(report.record()) == report
    for bad in (
        {**good, "files": [{"name": "../../etc/passwd", "size": 1}]},
        {**good, "files": [{"name": "v0.json", "size": 3}]},  # no manifest
        {**good, "variables": [{"name": "x; import os", "kind": "value", "file": "v0.json"}]},
        {**good, "variables": [{"name": "x", "kind": "pickle", "file": "v0.json"}]},
        {**good, "variables": [{"name": "x", "kind": "value", "file": "v9.json"}]},
        {**good, "files": [{"name": "v0.json", "size": -1}, {"name": "manifest.json", "size": 1}]},
    ):
        with pytest.raises((ValueError, KeyError, TypeError)):
            SnapshotReport.from_message(bad)
    assert RestoreReport.from_message({"type": "restored", "found": False}) is None
    with pytest.raises(ValueError):
        RestoreReport.from_message({"type": "restored", "found": True, "restored": ["a b"]})


def test_the_snapshot_files_are_data_the_worker_described(workspace: Path) -> None:
    with SandboxWorker(workspace) as worker:
        ok(worker, "values = [1, 2, 3]")
        report = worker.snapshot(BUDGET)
    files = dict(report.files)
    on_disk = {p.name: p.stat().st_size for p in (workspace / SNAPSHOT_DIR).iterdir()}
    assert files == on_disk
    manifest = json.loads((workspace / SNAPSHOT_DIR / MANIFEST).read_text())
    assert [v["name"] for v in manifest["variables"]] == ["values"]

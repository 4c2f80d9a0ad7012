"""DataFrames in session snapshots: read back by a new worker with their dtypes and labels;
the same frame gives the same bytes (the chunked storage of states dedupes on them); a
damaged file fails only its own variable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.sandbox import SandboxWorker, StepResult
from app.sandbox.snapshot_format import SNAPSHOT_DIR

BUDGET = 1 << 30

FRAMES = """
import numpy as np
import pandas as pd
n = 300
kinds = pd.DataFrame({
    "cat": pd.Categorical(["a", "b", None] * 100, categories=["b", "a", "z"], ordered=True),
    "when": pd.date_range("2026-01-01", periods=n, freq="h", tz="Europe/Paris"),
    "naive": pd.date_range("2026-01-01", periods=n, freq="D"),
    "count": pd.array([1, None, 3] * 100, dtype="Int64"),
    "flag": pd.array([True, None, False] * 100, dtype="boolean"),
    "text": np.array(["x", None, "long text é"] * 100, dtype="object"),
    "f32": np.arange(n, dtype=np.float32),
    "gap": pd.to_timedelta(np.arange(n), unit="s"),
})
indexed = pd.DataFrame(
    {"v": np.arange(6.0)},
    index=pd.MultiIndex.from_product([["p", "q"], [1, 2, 3]], names=["shop", "day"]),
)
wide = pd.DataFrame(
    np.arange(8).reshape(2, 4),
    columns=pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1), ("b", 1)], names=["g", "k"]),
)
labels_only = pd.DataFrame(index=pd.Index(["r1", "r2"], name="row"))
empty = pd.DataFrame({"x": pd.Series([], dtype="float64")})
flags = pd.Series(pd.Categorical(["lo", "hi", "lo"]), name=("a", 1), index=[5, 6, 7])
"""

DESCRIBE = """
named = {"kinds": kinds, "indexed": indexed, "wide": wide, "labels_only": labels_only,
         "empty": empty, "flags": flags}
for name, value in named.items():
    frame = isinstance(value, pd.DataFrame)
    print(name, frame, value.shape)
    print(value.dtypes.to_dict() if frame else value.dtype)
    print(list(value.index)[:5], value.index.names)
    print(list(value.columns) if frame else value.name, value.columns.names if frame else "")
    print(value.to_json(orient="split", date_format="iso"))
del name, value, frame, named
print(kinds["cat"].cat.categories.tolist(), kinds["cat"].cat.ordered)
print(kinds["when"].dt.tz, kinds["text"].dtype)
"""


def ok(worker: SandboxWorker, code: str) -> StepResult:
    result = worker.run(code)
    assert result.error is None, result.error
    return result


def restart(workspace: Path) -> SandboxWorker:
    worker = SandboxWorker(workspace)
    worker.start()  # restores the snapshot before any step
    return worker


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def test_frames_come_back_with_their_dtypes_and_labels(workspace: Path) -> None:
    with SandboxWorker(workspace) as first:
        ok(first, FRAMES)
        before = ok(first, DESCRIBE).logs
        report = first.snapshot(BUDGET)
    assert [u.name for u in report.unsaved] == []
    files = {v.name: v.file for v in report.variables if v.kind in ("frame", "series")}
    assert set(files) == {"kinds", "indexed", "wide", "labels_only", "empty", "flags"}
    assert all(file.endswith(".parquet") for file in files.values())
    with restart(workspace) as second:
        restored = second.take_restore_report()
        assert restored is not None and restored.failed == ()
        after = ok(second, DESCRIBE).logs
    assert after == before
    assert "'count': Int64Dtype()" in after and "Europe/Paris" in after
    assert "['b', 'a', 'z'] True" in after


def test_the_same_frame_saved_twice_is_the_same_bytes(workspace: Path) -> None:
    """Numbers and text alike: unchanged frames dedupe as chunks."""
    code = (
        "import numpy as np, pandas as pd\n"
        "numbers = pd.DataFrame(np.random.default_rng(1).random((200_000, 3)))\n"
        "words = pd.DataFrame({'w': ['alpha', 'beta', None] * 50_000})\n"
    )
    saved = []
    for _ in range(2):
        with SandboxWorker(workspace) as worker:
            ok(worker, code)
            report = worker.snapshot(BUDGET)
        folder = workspace / SNAPSHOT_DIR
        saved.append({name: (folder / name).read_bytes() for name, _ in report.files})
    files = {v.name: v.file for v in report.variables if v.file}
    assert set(files) == {"numbers", "words"}
    # The floats go raw beside their Parquet file (raw_columns.py): both the same bytes.
    assert files["numbers"].replace(".parquet", ".raw") in saved[0]
    assert saved[0] == saved[1]
    # Text is compressed: its offsets and characters take about 1 MB uncompressed.
    assert len(saved[0][files["words"]]) < 300_000


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_frame_file_fails_only_its_variable(workspace: Path, damage: str) -> None:
    """The code controls the workspace: a frame file it spoiled is refused, not trusted."""
    with SandboxWorker(workspace) as worker:
        ok(worker, "import pandas as pd\nkept = 5\nframe = pd.DataFrame({'s': ['a', 'bb'] * 500})")
        report = worker.snapshot(BUDGET)
    path = workspace / SNAPSHOT_DIR / next(v.file for v in report.variables if v.name == "frame")
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"PAR1" + b"\xff" * 4000 + b"PAR1")
    else:
        path.write_bytes(data[: len(data) // 2])
    with restart(workspace) as worker:
        restored = worker.take_restore_report()
        assert restored is not None
        assert set(restored.restored) == {"pd", "kept"}
        assert restored.lost == ["frame (could not be loaded)"]
        assert ok(worker, "print(kept)").logs.strip() == "5"

"""Float columns of a snapshot's frames go raw beside the Parquet file and come back mapped
copy-on-write (app/sandbox/worker/raw_columns.py): a new worker reads none of their bytes,
writes reach its own memory only, and a spoiled file or entry fails its own variable."""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from app.sandbox import SandboxWorker
from app.sandbox.snapshot_format import MANIFEST, SNAPSHOT_DIR
from app.sandbox.worker.frames import read_frame, write_frame
from tests.sandbox.test_snapshot_frames import BUDGET, ok, restart

MAKE = (
    "import numpy as np\nimport pandas as pd\n"
    "frame = pd.DataFrame({'price': np.arange(1000) / 4, 'n': np.arange(1000),\n"
    "                      'name': ['a', 'b'] * 500, 'ratio': np.ones(1000, dtype='float32')})\n"
    "kept = 5"
)
SHOW = "print(float(frame['price'].sum()), int(frame['n'].sum()), list(frame.columns))"


def _root(values: Any) -> Any:
    while getattr(values, "base", None) is not None:
        values = values.base
    return values.obj if isinstance(values, memoryview) else values


def test_float_columns_are_mapped_from_their_file_not_copied(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"a": np.arange(5.0), "s": list("vwxyz"), "b": np.arange(5, dtype="float32")},
        index=pd.Index(list("pqrst"), name="k"),
    )
    path = tmp_path / "v0.parquet"
    extra = write_frame(frame, path, BUDGET)
    assert [c[:3] for c in extra["raw"]["columns"]] == [[0, "a", "<f8"], [2, "b", "<f4"]]
    back = read_frame(path, extra)
    pd.testing.assert_frame_equal(back, frame)
    values = back["a"].to_numpy()
    assert isinstance(_root(values), mmap.mmap)  # the file's pages, not a copy
    raw = (tmp_path / "v0.raw").read_bytes()
    back.loc["p", "a"] = 42.0  # a private mapping: the file never changes
    assert back.loc["p", "a"] == 42.0
    assert (tmp_path / "v0.raw").read_bytes() == raw


def test_a_new_worker_writes_its_mapped_frame_without_touching_the_saved_one(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with SandboxWorker(workspace) as first:
        ok(first, MAKE)
        before = ok(first, SHOW).logs
        report = first.snapshot(BUDGET)
    names = {name for name, _ in report.files}
    assert any(name.endswith(".raw") for name in names), names
    with restart(workspace) as second:
        restored = second.take_restore_report()
        assert restored is not None and restored.failed == (), restored
        assert ok(second, SHOW).logs == before
        ok(second, "frame.loc[0, 'price'] = 1000.0\nframe['ratio'] *= 2")
        # The saved snapshot is untouched until this worker writes its own.
        with restart(workspace) as third:
            third.take_restore_report()
            assert ok(third, SHOW).logs == before
        second.snapshot(BUDGET)
    with restart(workspace) as fourth:
        fourth.take_restore_report()
        shown = ok(fourth, SHOW + "\nprint(float(frame['ratio'].sum()))").logs.split("\n")
    assert shown[0] == "125875.0 499500 ['price', 'n', 'name', 'ratio']" and shown[1] == "2000.0"


@pytest.mark.parametrize("damage", ["truncated", "offset", "dtype", "position"])
def test_a_spoiled_raw_file_or_entry_fails_only_its_variable(tmp_path: Path, damage: str) -> None:
    """The code controls the workspace (the file and the manifest): what it spoiled is
    refused with a reason, never mapped past its end or read as objects."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with SandboxWorker(workspace) as worker:
        ok(worker, MAKE)
        report = worker.snapshot(BUDGET)
    folder = workspace / SNAPSHOT_DIR
    raw = next(folder / name for name, _ in report.files if name.endswith(".raw"))
    manifest = json.loads((folder / MANIFEST).read_text())
    [entry] = [v for v in manifest["variables"] if v["name"] == "frame"]
    if damage == "truncated":
        raw.write_bytes(raw.read_bytes()[:100])
    elif damage == "offset":
        entry["raw"]["columns"][0][3] = raw.stat().st_size
    elif damage == "dtype":
        entry["raw"]["columns"][0][2] = "|O"
    else:
        entry["raw"]["columns"][0][0] = 99
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with restart(workspace) as worker:
        restored = worker.take_restore_report()
        assert restored is not None
        assert "kept" in restored.restored and "frame" not in restored.restored
        assert restored.lost == ["frame (could not be loaded)"]
        assert ok(worker, "print(kept)").logs.strip() == "5"

"""Snapshot benchmark: a session holding a 1 GB DataFrame, saved and restored for real.

What a user waits for when a session's sandbox goes away and comes back:
- save: the worker writes its variables as Parquet (end of a run);
- upload: the backend stores them in S3 (SeaweedFS here, MinIO in compose);
- download: another machine brings them into a fresh workspace;
- restore: a new worker loads them inside its sandbox (its start-up without a snapshot
  is measured too, and subtracted).
Also the peak memory of the largest worker, and the snapshot's size.

    cd backend && uv run python -m benchmarks.snapshot [--gb 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
import uuid

import psutil

from app.runs import snapshots
from app.runs.snapshot_chunks import ChunkWriter
from app.sandbox import SandboxLimits, SandboxWorker, prepare_sandbox
from app.sandbox.spawn import LocalLauncher
from benchmarks.branch import chunk_database
from benchmarks.seaweed import s3_storage

COLUMNS = 8  # float64: 8 bytes a cell


def make_frame_code(rows: int) -> str:
    return f"""
import numpy as np
import pandas as pd
rng = np.random.default_rng(7)
big = pd.DataFrame({{f"c{{i}}": rng.random({rows}) for i in range({COLUMNS - 1})}})
big["day"] = np.arange({rows}, dtype=np.int64) % 365
print(round(big.memory_usage(deep=True).sum() / 2**30, 2), "GB in memory")
"""


class WorkerMemory:
    """The largest resident memory any sandbox worker reached, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            for process in psutil.process_iter(["cmdline", "memory_info"]):
                cmdline = process.info["cmdline"] or []
                if "app.sandbox.worker" in cmdline and process.info["memory_info"]:
                    self.peak = max(self.peak, process.info["memory_info"].rss)

    def take(self) -> float:
        """The peak since the last take, in MB."""
        peak, self.peak = self.peak, 0
        return peak / 2**20

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def timed(label: str, action, *args):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = action(*args)
    seconds = time.perf_counter() - started
    print(f"{label:<44} {seconds:7.2f} s")
    return result, seconds


async def run(gb: float) -> None:
    rows = int(gb * 2**30 / (8 * COLUMNS))
    limits = SandboxLimits(
        memory_mb=int(gb * 1024 * 3 + 1024),
        step_timeout_seconds=900,
        disk_mb=int(gb * 1024 * 4 + 1024),
    )
    launcher = LocalLauncher()
    await asyncio.to_thread(prepare_sandbox, launcher)
    async with s3_storage("bench-snapshot-", "bench-snapshot") as (root, storage):
        session_id = uuid.uuid4()
        memory = WorkerMemory()
        here, there = root / "replica-1", root / "replica-2"
        print(f"a session holding a {gb:g} GB DataFrame ({rows:,} rows x {COLUMNS} columns)")
        with SandboxWorker(here, launcher=launcher, limits=limits) as worker:
            result, _ = await asyncio.to_thread(
                timed,
                "make the frame (not part of the figures)",
                worker.run,
                make_frame_code(rows),
            )
            assert result.error is None, result.error
            made = memory.take()
            report, save = await asyncio.to_thread(
                timed, "save (worker writes Parquet)", worker.snapshot, limits.disk_mb << 20
            )
            saving = memory.take()
        project_id = uuid.uuid4()
        writer = ChunkWriter(storage, await chunk_database(root), project_id)
        started = time.perf_counter()
        record = await snapshots.upload(storage, here, report, limits.disk_mb << 20, writer)
        upload = time.perf_counter() - started
        print(f"{'upload (backend -> S3)':<44} {upload:7.2f} s")
        print(f"{'snapshot size':<44} {record['bytes'] / 2**30:7.2f} GB")

        started = time.perf_counter()
        await snapshots.download(storage, there, root / "marker", session_id, record, project_id)
        download = time.perf_counter() - started
        print(f"{'download (S3 -> another workspace)':<44} {download:7.2f} s")

        empty = root / "empty"
        with SandboxWorker(empty, launcher=launcher, limits=limits) as plain:
            _, cold = await asyncio.to_thread(timed, "worker start, no snapshot", plain.start)
        memory.take()
        with SandboxWorker(there, launcher=launcher, limits=limits) as restored:
            _, warm = await asyncio.to_thread(timed, "worker start + restore", restored.start)
            note = restored.take_restore_report()
            assert note is not None and "big" in note.restored, note
            check = await asyncio.to_thread(restored.run, "print(big.shape)")
            assert check.error is None, check.error
        restoring = memory.take()
        memory.stop()
        print(f"{'restore (inside the sandbox)':<44} {warm - cold:7.2f} s")
        print(f"{'worker peak RSS: holding the frame':<44} {made:7.0f} MB")
        print(f"{'worker peak RSS: saving':<44} {saving:7.0f} MB")
        print(f"{'worker peak RSS: restoring':<44} {restoring:7.0f} MB")
        print(
            f"\nend of a run -> stored: {save + upload:.1f} s;"
            f" stored -> usable on another machine: {download + warm:.1f} s"
            f" (of which {cold:.1f} s is a worker's usual start)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the DataFrame")
    asyncio.run(run(parser.parse_args().gb))


if __name__ == "__main__":
    main()

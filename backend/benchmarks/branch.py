"""Branch benchmark (issue 43, state at every question): chunked snapshots, for real.

A worker holds a DataFrame; ten runs that leave it untouched each keep their state:
- storage: the bytes stored for the ten states against one snapshot (target <= 1.1x);
- a run's end when nothing changed: the chunked store (hash, nothing new to write) against
  the plain one-object write of the same files (target: no extra time);
- restore: a state of --restore-mb brought from its chunks into a new session's workspace
  and a worker ready with it (target <= 2 s after the request): a new one (forked by the
  fork server, as the product starts them), and a spare started ahead (as the pool's
  SANDBOX_SPARE_WORKERS), each with its parts (chunks -> files, start + restore);
- replay: a branch with no kept state runs the original runs' code again in a fresh worker
  (request -> ready), beside the time the original runs' code took; with a new worker, and
  from one already started (the sandbox pool's spare, which a session without a snapshot
  takes).
Chunks go to S3 (SeaweedFS), their rows to a SQLite database. Figures only, no assertions.

    cd backend && uv run python -m benchmarks.branch [--size-mb 500] [--restore-mb 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from app.infra.storage import S3Storage
from app.models import Base, SnapshotChunk, SnapshotOrphanSuspect
from app.runs import snapshots
from app.runs.snapshot_chunks import ChunkWriter
from app.sandbox import SNAPSHOT_DIR, SandboxLimits, SandboxWorker, prepare_sandbox
from app.sandbox.spawn import LocalLauncher
from benchmarks.seaweed import s3_storage

COLUMNS = 8


def frame_code(mb: float, name: str = "big") -> str:
    rows = int(mb * 2**20 / (8 * COLUMNS))
    return f"""
import numpy as np
import pandas as pd
rng = np.random.default_rng(7)
{name} = pd.DataFrame({{f"c{{i}}": rng.random({rows}) for i in range({COLUMNS})}})
"""


async def chunk_database(root: Path) -> Any:
    """A SQLite database with the chunk table (a session factory)."""
    engine = create_async_engine(f"sqlite+aiosqlite:///{root / 'chunks.db'}")
    async with engine.begin() as conn:
        await conn.run_sync(
            Base.metadata.create_all,
            tables=[SnapshotChunk.__table__, SnapshotOrphanSuspect.__table__],
        )
    return async_sessionmaker(engine, expire_on_commit=False)


async def stored_bytes(factory: Any, project_id: uuid.UUID) -> int:
    async with factory() as db:
        query = select(func.coalesce(func.sum(SnapshotChunk.size), 0)).where(
            SnapshotChunk.project_id == project_id
        )
        return int(await db.scalar(query) or 0)


async def plain_write(storage: S3Storage, workspace: Path, report: Any, key: str) -> None:
    """The one-object write snapshots did before chunks: every file's bytes, every run."""

    async def body() -> AsyncIterator[bytes]:
        for name, _ in report.files:
            handle = await asyncio.to_thread((workspace / SNAPSHOT_DIR / name).open, "rb")
            with handle:
                while chunk := await asyncio.to_thread(handle.read, 4 << 20):
                    yield chunk

    await storage.put(key, body(), "application/octet-stream")


def line(label: str, value: str) -> None:
    print(f"{label:<58} {value}")


async def run(size_mb: float, restore_mb: float, runs: int) -> None:
    limits = SandboxLimits(
        memory_mb=int(max(size_mb, restore_mb) * 4 + 2048),
        step_timeout_seconds=900,
        disk_mb=int(max(size_mb, restore_mb) * 4 + 1024),
    )
    allowed = limits.disk_mb << 20
    launcher = LocalLauncher()
    await asyncio.to_thread(prepare_sandbox, launcher)
    async with s3_storage("bench-branch-", "bench-branch") as (root, storage):
        factory = await chunk_database(root)
        project_id = uuid.uuid4()
        here = root / "session"
        print(f"(a), (b): a {size_mb:g} MB DataFrame, {runs} runs that leave it untouched")
        chunked: list[float] = []
        plain: list[float] = []
        first = 0
        # The original runs' code, and how long each took (what a replay runs again).
        steps = [frame_code(size_mb)] + [f"n = {number}" for number in range(1, runs)]
        original = 0.0
        with SandboxWorker(here, launcher=launcher, limits=limits) as worker:
            await asyncio.to_thread(worker.start)  # its start is not the runs' time
            started = time.perf_counter()
            made = await asyncio.to_thread(worker.run, steps[0])
            original += time.perf_counter() - started
            assert made.error is None, made.error
            for number in range(runs):
                if number:
                    started = time.perf_counter()
                    await asyncio.to_thread(worker.run, steps[number])
                    original += time.perf_counter() - started
                report = await asyncio.to_thread(worker.snapshot, allowed)
                writer = ChunkWriter(storage, factory, project_id)
                await writer.load_known()
                started = time.perf_counter()
                record = await snapshots.upload(storage, here, report, allowed, writer)
                chunked.append(time.perf_counter() - started)
                first = first or int(record["bytes"])
                started = time.perf_counter()
                await plain_write(storage, here, report, f"plain/{number}")
                plain.append(time.perf_counter() - started)
        total = await stored_bytes(factory, project_id)
        line("one snapshot", f"{first / 2**20:9.1f} MB")
        line(f"{runs} states, chunks stored", f"{total / 2**20:9.1f} MB")
        line("ratio (target <= 1.1)", f"{total / first:9.3f}")
        line("run's end, first state (chunked: all chunks new)", f"{chunked[0]:9.2f} s")
        line("run's end, first state (plain one-object write)", f"{plain[0]:9.2f} s")
        unchanged = chunked[1:] or [0.0]
        line(
            "run's end, nothing changed (chunked), mean",
            f"{sum(unchanged) / len(unchanged):9.2f} s",
        )
        before = plain[1:] or [0.0]
        line(
            "run's end, nothing changed (plain write), mean",
            f"{sum(before) / len(before):9.2f} s",
        )

        print(f"\n(c): a {restore_mb:g} MB state restored from chunks into a new session")
        source = root / "source"
        with SandboxWorker(source, launcher=launcher, limits=limits) as worker:
            made = await asyncio.to_thread(worker.run, frame_code(restore_mb, "state"))
            assert made.error is None, made.error
            report = await asyncio.to_thread(worker.snapshot, allowed)
        writer = ChunkWriter(storage, factory, project_id)
        await writer.load_known()
        record = await snapshots.upload(storage, source, report, allowed, writer)
        # As the product starts workers (SANDBOX_FORK_SERVER: forked from a process with
        # the libraries loaded, when the host lets bubblewrap nest), into workspaces here.
        pooled = LocalLauncher(workspaces=root / "workspaces")
        empty = root / "workspaces" / "empty"
        with SandboxWorker(empty, launcher=pooled, limits=limits) as blank:
            started = time.perf_counter()
            await asyncio.to_thread(blank.start)
            cold = time.perf_counter() - started
        figures: dict[str, tuple[float, float, float]] = {}
        for way in ("spare worker", "new worker"):
            branch = root / "workspaces" / f"branch-{way.split()[0]}"
            spare = SandboxWorker(
                root / "workspaces" / f"spare-{way.split()[0]}", launcher=pooled, limits=limits
            )
            if way == "spare worker":  # started ahead, as the pool's SANDBOX_SPARE_WORKERS
                await asyncio.to_thread(spare.start)
            started = time.perf_counter()
            await snapshots.download(
                storage, branch, root / f"marker-{way}", uuid.uuid4(), record, project_id
            )
            fetched = time.perf_counter() - started
            if way == "spare worker":
                await asyncio.to_thread(spare.take_over, branch)
                restored = spare
            else:
                restored = SandboxWorker(branch, launcher=pooled, limits=limits)
                await asyncio.to_thread(restored.start)
            ready = time.perf_counter() - started
            note = restored.take_restore_report()
            assert note is not None and "state" in note.restored, note
            restored.close()
            figures[way] = (fetched, ready - fetched, ready)
        line("state size", f"{record['bytes'] / 2**20:9.1f} MB")
        line("worker start, no snapshot (for reference)", f"{cold:9.2f} s")
        for way, (fetched, starting, ready) in figures.items():
            line(f"{way}: chunks -> new workspace", f"{fetched:9.2f} s")
            line(f"{way}: worker start + restore", f"{starting:9.2f} s")
            line(f"{way}: request -> ready with the state (target <= 2 s)", f"{ready:9.2f} s")

        print(f"\n(d): no kept state: the branch replays the {runs} runs' code in a fresh worker")
        replayed = root / "replayed"
        started = time.perf_counter()
        with SandboxWorker(replayed, launcher=launcher, limits=limits) as fresh:
            await asyncio.to_thread(fresh.start)
            spare_at = time.perf_counter()
            for code in steps:  # as app.branches.restore.replay does
                result = await asyncio.to_thread(fresh.run, code)
                assert result.error is None, result.error
            done = time.perf_counter()
        line("the original runs' code, as first run", f"{original:9.2f} s")
        line("replay: request -> ready, new worker started", f"{done - started:9.2f} s")
        line("replay: request -> ready, from a started spare worker", f"{done - spare_at:9.2f} s")
        line("replay / original runs (code only)", f"{(done - spare_at) / original:9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=500, help="the untouched DataFrame")
    parser.add_argument("--restore-mb", type=float, default=200, help="the state restored")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(run(args.size_mb, args.restore_mb, args.runs))


if __name__ == "__main__":
    main()

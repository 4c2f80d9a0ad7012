"""Spare workers: started ahead of need, taken by the first session that needs a worker.

On the real pool with real bubblewrapped workers. A spare's empty folder is renamed to the
session's workspace when the session takes it, with the session's files moved in: the code
sees exactly that session's files, never another's, and its worker counts against the
bound like any other. Waits are for states (a spare is ready), never for a duration.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from app.infra.storage import LocalStorage
from app.models import File
from app.runs.sandboxes import SPARE_PREFIX, SandboxPool
from app.runs.workspace import manifest_path, materialize, workspace_dir
from app.sandbox import hostfs
from tests.conftest import stack_settings

READY_TIMEOUT = 120.0


def spare_pool(tmp_path: Path, max_workers: int, spares: int = 1, **overrides: Any) -> SandboxPool:
    settings = stack_settings(
        "embedded",
        tmp_path,
        SANDBOX_MAX_WORKERS=max_workers,
        SANDBOX_SPARE_WORKERS=spares,
        SANDBOX_STEP_TIMEOUT_SECONDS=60,
        **overrides,
    )
    return SandboxPool(settings)


async def until(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def spare_folders(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "workspaces").glob(f"{SPARE_PREFIX}*"))


class Starts:
    """Counts the pool's on_start calls (it is called only before a cold start)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> Awaitable[None]:
        self.count += 1
        return asyncio.sleep(0)


def test_a_session_takes_a_ready_spare_and_sees_only_its_own_files(tmp_path: Path) -> None:
    async def scenario() -> None:
        pool = spare_pool(tmp_path, max_workers=2)
        try:
            status = await pool.prepare()
            assert status.available and status.mechanism == "bubblewrap"
            await until(lambda: pool.spares == 1)
            (spare_folder,) = spare_folders(tmp_path)
            user = uuid.uuid4()

            # Alice's files are in her workspace before her worker is acquired (materialize).
            alice = uuid.uuid4()
            alice_dir = workspace_dir(tmp_path, alice)
            alice_dir.mkdir(parents=True)
            (alice_dir / "sales.csv").write_text("region,revenue\nNorth,10\nSouth,32\n")
            ticket = pool.claim(alice, user)
            assert ticket.granted.is_set()
            starts = Starts()
            worker, fresh = await pool.acquire(ticket, None, on_start=starts)
            assert fresh and starts.count == 0  # nothing to wait for: it was running
            assert worker.workspace == alice_dir
            assert spare_folder not in spare_folders(tmp_path)  # renamed, not copied
            result = await asyncio.to_thread(
                worker.run,
                "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df['revenue'].sum())\n"
                "df.head(1).to_csv('notes.csv', index=False)",
            )
            assert result.error is None, result.error
            assert result.logs.strip() == "42"
            assert (alice_dir / "notes.csv").read_text() == "region,revenue\nNorth,10\n"
            pool.release(alice)

            # Another spare starts into the room left (bound 2: Alice's worker and it).
            await until(lambda: pool.spares == 1)
            assert pool.live + pool.spares == 2

            # Bob takes it: he sees his empty workspace, none of Alice's files or variables.
            bob = uuid.uuid4()
            ticket = pool.claim(bob, user)
            worker, fresh = await pool.acquire(ticket, None, on_start=starts)
            assert fresh and starts.count == 0
            result = await asyncio.to_thread(
                worker.run,
                "import pandas as pd\nfor name in ('sales.csv', 'notes.csv'):\n"
                "    try:\n        pd.read_csv(name)\n        print(name, 'seen')\n"
                "    except FileNotFoundError:\n        print(name, 'absent')",
            )
            assert result.error is None, result.error
            assert result.logs.split() == ["sales.csv", "absent", "notes.csv", "absent"]
            result = await asyncio.to_thread(worker.run, "print(df)")
            assert result.error is not None and "df" in result.error  # not Alice's variable
            pool.release(bob)

            # The pool is full (two sessions' workers): no spare; a third session's worker
            # starts cold in the room of the least recently used idle one (Alice's).
            assert pool.spares == 0
            carol = uuid.uuid4()
            ticket = pool.claim(carol, user)
            assert ticket.granted.is_set() and ticket.evicting is not None
            worker, fresh = await pool.acquire(ticket, None, on_start=starts)
            assert fresh and starts.count == 1
            result = await asyncio.to_thread(worker.run, "print('cold')")
            assert result.error is None and "cold" in result.logs
            assert pool.live == 2 and pool.spares == 0
        finally:
            await pool.close()
        assert spare_folders(tmp_path) == []  # a closed pool leaves no spare folder behind

    asyncio.run(scenario())


def test_a_returning_session_gets_its_files_and_variables_through_a_spare(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        # Idle workers are evicted at the first reap; spares are not.
        pool = spare_pool(tmp_path, max_workers=3, SANDBOX_IDLE_SECONDS=0.001)
        try:
            await pool.prepare()
            await until(lambda: pool.spares == 1)
            user, session = uuid.uuid4(), uuid.uuid4()
            ticket = pool.claim(session, user)
            worker, _ = await pool.acquire(ticket)
            code = "import pandas as pd\ntotals = pd.Series([1.5, 2.5])\ntotals.to_csv('out.csv')"
            assert (await asyncio.to_thread(worker.run, code)).error is None
            saved = await asyncio.to_thread(worker.snapshot, 1 << 30)
            assert saved.changed and "totals" in [v.name for v in saved.variables]
            pool.release(session)

            await asyncio.sleep(0.01)  # longer idle than SANDBOX_IDLE_SECONDS
            await pool.reap()  # the session's worker goes; a spare is kept
            assert pool.live == 0
            await until(lambda: pool.spares == 1)

            starts = Starts()
            ticket = pool.claim(session, user)
            worker, fresh = await pool.acquire(ticket, "generation-1", on_start=starts)
            assert fresh and worker.snapshot_generation == "generation-1"
            assert starts.count == 1  # restoring the variables is worth a word to the user
            report = worker.take_restore_report()
            assert report is not None and "totals" in report.restored
            result = await asyncio.to_thread(
                worker.run, "print(totals.sum(), pd.read_csv('out.csv').shape)"
            )
            assert result.error is None, result.error
            assert result.logs.strip() == "4.0 (2, 2)"
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_a_queued_run_gets_the_room_before_a_new_spare(tmp_path: Path) -> None:
    async def scenario() -> None:
        pool = spare_pool(tmp_path, max_workers=1)
        try:
            await pool.prepare()
            await until(lambda: pool.spares == 1)
            user = uuid.uuid4()
            first, second = uuid.uuid4(), uuid.uuid4()
            holder = pool.claim(first, user)  # takes the spare: the pool is full
            assert holder.granted.is_set() and pool.spares == 0
            waiter = pool.claim(second, user)
            assert not waiter.granted.is_set() and waiter.position == 1
            await pool.acquire(holder)
            pool.release(first)  # the idle worker makes way for the queued run, not a spare
            assert waiter.granted.is_set()
            worker, fresh = await pool.acquire(waiter)
            assert fresh and worker.alive and pool.live == 1
            await asyncio.sleep(0.5)
            assert pool.spares == 0 and pool._spares_starting == 0  # no room for one
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_a_dead_spare_is_replaced_by_a_cold_start(tmp_path: Path) -> None:
    async def scenario() -> None:
        pool = spare_pool(tmp_path, max_workers=2)
        try:
            await pool.prepare()
            await until(lambda: pool.spares == 1)
            pool._spares[0].kill()  # e.g. the kernel's OOM killer chose it
            session = uuid.uuid4()
            starts = Starts()
            worker, fresh = await pool.acquire(pool.claim(session, uuid.uuid4()), on_start=starts)
            assert fresh and starts.count == 1 and worker.alive
            assert worker.workspace == workspace_dir(tmp_path, session)
            result = await asyncio.to_thread(worker.run, "print(6 * 7)")
            assert result.error is None and "42" in result.logs
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_a_spare_reads_the_project_files_given_read_only_and_cannot_change_them(
    tmp_path: Path,
) -> None:
    """The session's project files are given before its worker is acquired (materialize,
    shared): the spare's folder of project files, bound read-only in its sandbox, takes
    them over with the session's name."""

    async def scenario() -> None:
        pool = spare_pool(tmp_path, max_workers=2)
        storage = LocalStorage(tmp_path / "objects")
        content = b"region,revenue\nNorth,10\nSouth,32\n"
        await storage.put("f/sales", _chunks(content), "text/csv")
        file = File(
            name="sales.csv",
            storage_key="f/sales",
            sha256=hashlib.sha256(content).hexdigest(),
            size=len(content),
        )
        try:
            assert (await pool.prepare()).available
            await until(lambda: pool.spares == 1)
            alice = uuid.uuid4()
            workspace = workspace_dir(tmp_path, alice)
            manifest = manifest_path(tmp_path, alice)
            placed = await materialize(
                storage, workspace, manifest, [file], shared=tmp_path / "copies"
            )
            assert placed == ["sales.csv"]
            ticket = pool.claim(alice, uuid.uuid4())
            worker, _ = await pool.acquire(ticket, None)
            result = await asyncio.to_thread(
                worker.run,
                "import io\nimport pandas as pd\nprint(pd.read_csv('sales.csv')['revenue'].sum())\n"
                "io.open('sales.csv', 'ab').write(b'South,1000\\n')",
            )
            assert result.logs.strip() == "42"
            assert "Read-only file system" in str(result.error)
            assert storage.path("f/sales").read_bytes() == content
            # No copy: the stored file's own bytes (a hard link), and none on the quota.
            assert storage.path("f/sales").stat().st_nlink == 2
            assert hostfs.usage(workspace).bytes < 64 << 10
            pool.release(alice)
        finally:
            await pool.close()

    asyncio.run(scenario())


async def _chunks(content: bytes) -> AsyncIterator[bytes]:
    yield content

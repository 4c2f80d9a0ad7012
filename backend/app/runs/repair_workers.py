"""Workers for a run's repair strategies (app.agent.fanout), started from its variables.

How a strategy's worker gets the run's state (app.runs.state_fork, as an attempt's space):
a snapshot restore, not a fork of the running process. The run's worker saves its
variables into its workspace's snapshot folder (as at the end of every run); the files the
code wrote and that snapshot are copied (regular files copied, never hard-linked, so a
strategy's writes cannot reach the run's files; links kept as links, never followed;
FIFOs, hard links to other files and the like left out) into a
folder of its own beside it, the project's files are given to it as to any workspace (hard
links into its read-only view), and a new worker there restores the snapshot as it starts.
The workers start at once, in parallel.

They take free room in the sandbox pool (`SandboxPool.borrow`): never more than the bound,
never a queued run's slot; with no room, fewer strategies (or none) run.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.agent.fanout import RepairFanOut, RepairingModel
from app.agent.model import create_model
from app.config import Settings
from app.models import Run
from app.runs import state_fork
from app.runs.agent_thread import AgentThread
from app.runs.context import AgentContext
from app.runs.sandboxes import SandboxPool
from app.sandbox import SandboxWorker, hostfs
from app.sandbox.layout import files_view

log = logging.getLogger(__name__)

SUFFIX = "-repair-"


class RepairWorkers:
    """For app.agent.fanout: forks of one run's worker (its variables and files)."""

    def __init__(
        self,
        pool: SandboxPool,
        main: SandboxWorker,
        loop: asyncio.AbstractEventLoop,
        snapshot_bytes: int,
    ):
        """Args:
        pool: The sandbox pool (its launcher, limits and room).
        main: The run's worker.
        loop: The event loop the pool lives on (fork() is called from the agent's thread).
        snapshot_bytes: The most the variables' snapshot may take (SANDBOX_SNAPSHOT_MB).
        """
        self.pool = pool
        self.main = main
        self.loop = loop
        self.snapshot_bytes = snapshot_bytes
        self._borrowed: dict[int, int] = {}

    def fork(self, count: int) -> list[SandboxWorker]:
        """Up to `count` started workers with the run's variables and files. Blocking."""
        taken = asyncio.run_coroutine_threadsafe(self._borrow(count), self.loop).result()
        if not taken:
            return []
        try:
            self.main.snapshot(self.snapshot_bytes)
            folders = [self._copy(i + 1) for i in range(taken)]
        except BaseException:
            self._give_back(taken)
            raise
        workers = [
            SandboxWorker(folder, launcher=self.pool.launcher, limits=self.pool.limits)
            for folder in folders
        ]
        for worker in workers:
            worker.project_files = self.main.project_files
            worker.given_bytes = self.main.given_bytes
        started: list[SandboxWorker] = []
        for worker, error in zip(workers, state_fork.start_all(workers), strict=True):
            if error is None:
                started.append(worker)
            else:
                log.warning("a repair strategy's worker did not start: %s", error)
        failed = [w for w in workers if w not in started]
        self._remove(failed)
        if failed:
            self._give_back(len(failed))
        return started

    def drop(self, workers: Sequence[SandboxWorker]) -> None:
        """Stop the strategies' workers, remove their folders and give their room back."""
        self._remove(workers)
        if workers:
            self._give_back(len(workers))

    def _remove(self, workers: Sequence[SandboxWorker]) -> None:
        for worker in workers:
            try:
                worker.close()
            except Exception:
                log.exception("could not stop a repair strategy's worker")
            for folder in (worker.workspace, files_view(worker.workspace)):
                try:
                    hostfs.remove_tree(folder)
                except FileNotFoundError:
                    pass
                except Exception:
                    log.exception("could not remove %s", folder)

    def _copy(self, number: int) -> Path:
        source = self.main.workspace
        target = source.with_name(f"{source.name}{SUFFIX}{number}")
        for folder in (target, files_view(target)):
            if folder.exists():  # left by a run that died mid-repair
                hostfs.remove_tree(folder)
        copy_tree(source, target)
        state_fork.copy_snapshot(source, target)
        view, given = files_view(target), files_view(source)
        view.mkdir(parents=True)
        if given.is_dir():
            for entry in os.scandir(given):
                if entry.is_file(follow_symlinks=False):
                    os.link(entry.path, view / entry.name)  # read-only in every sandbox
        return target

    async def _borrow(self, count: int) -> int:
        """Slots from the pool (on the event loop, where its bookkeeping lives), once the
        idle workers stopped for them have stopped (they hold memory until then)."""
        taken, stops = self.pool.borrow(count)
        if stops:
            await asyncio.gather(*(asyncio.shield(stop) for stop in stops), return_exceptions=True)
        return taken

    def _give_back(self, count: int) -> None:
        async def give() -> None:
            self.pool.give_back(count)

        asyncio.run_coroutine_threadsafe(give(), self.loop).result()


def copy_tree(source: Path, target: Path) -> None:
    """Copy the files a run's code wrote into a new folder (`state_fork.copy_files`)."""
    target.mkdir(parents=True)
    state_fork.copy_files(source, target, links=True)


def repairing(
    model: Any,
    settings: Settings,
    pool: SandboxPool,
    context: AgentContext,
    run: Run,
    bridge: AgentThread,
    on_tokens: Callable[[int, int], None],
) -> Any:
    """The run's model, wrapped for parallel repair (app.agent.fanout): its fan-out tells
    `bridge` what it did and counts the tokens of calls that are no step with `on_tokens`.
    Set its `agent` once the agent is built. With REPAIR_STRATEGIES 0, or no snapshots (a
    strategy could not start from the variables), the wrapper never fans out."""
    fanout = RepairFanOut(
        strategies=settings.REPAIR_STRATEGIES if settings.SANDBOX_SNAPSHOT_MB else 0,
        make_model=lambda: create_model(settings, run.model),
        workers=RepairWorkers(
            pool, context.worker, asyncio.get_running_loop(), settings.SANDBOX_SNAPSHOT_MB << 20
        ),
        question=run.query,
        on_done=bridge.on_repair,
        on_tokens=on_tokens,
        answerer=context.answerer,
    )
    return RepairingModel(model, fanout)

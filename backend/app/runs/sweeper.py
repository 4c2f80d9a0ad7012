"""Upkeep across replicas: runs nobody runs any more are failed, waits that lasted too long
end, and runs here that another replica was asked to cancel stop."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta

from app.models import Run, RunStatus
from app.models.base import utcnow
from app.runs.agent_thread import CANCEL_POLL_SECONDS
from app.runs.ending import RunEnding
from app.runs.execution import Runtime, best_effort
from app.runs.failures import INTERRUPTED, input_timed_out

log = logging.getLogger(__name__)


class Sweeper:
    def __init__(self, rt: Runtime, ending: RunEnding):
        self.rt = rt
        self.ending = ending
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Every sixth of the lock's TTL, fail the runs nobody runs any more: a run whose
        replica died ends about one TTL after it died (recover_interrupted_runs). And every
        CANCEL_POLL_SECONDS, stop the runs here that another replica was asked to cancel."""
        self._tasks = [
            asyncio.create_task(self._sweep_forever()),
            asyncio.create_task(self._watch_cancels()),
        ]

    def stop(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def _watch_cancels(self) -> None:
        """One look for all the runs of this replica, queued or running, however many."""
        while True:
            await asyncio.sleep(CANCEL_POLL_SECONDS)
            runs = self.rt.runs.live.items()
            live = {str(run_id): run for run_id, run in runs if not run.stop.is_set()}
            try:
                cancelled = await self.rt.events.cancels_requested(list(live))
            except Exception as exc:  # Redis is down: each run notices through its log
                log.debug("could not look for cancelled runs: %r", exc)
                continue
            for run_id in cancelled:
                live[run_id].stop.set()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.rt.lock_ttl / 6)
            await best_effort(self.recover_interrupted_runs(), "sweep interrupted runs")

    async def recover_interrupted_runs(self) -> int:
        """Fail the active runs that no replica runs any more, with a run.finished to end their
        streams: their process died (the session lock expired), or could not record the end."""

        async def orphaned(run: Run) -> bool:
            return await self._orphaned(run.id, run.session_id)

        # Every replica sweeps every few seconds, with maybe hundreds of runs active: ids
        # first, the locks checked holding no connection, whole rows only for the orphans.
        orphans = [
            run_id
            for run_id, session_id in await self.rt.repository.running()
            if await self._orphaned(run_id, session_id)
        ]
        recovered = 0
        if orphans:  # each checked again: taken up meanwhile?
            recovered = await self.ending.fail_orphans(orphans, INTERRUPTED, orphaned)
        # Runs that waited for the user too long end here too (on whichever replica).
        timeout = self.rt.settings.RUN_INPUT_TIMEOUT_SECONDS
        cutoff = utcnow() - timedelta(seconds=timeout)
        error = input_timed_out(timeout)
        for run_id in await self.rt.repository.expired_waits(cutoff):
            if await self.ending.end_waiting(run_id, RunStatus.failed, error, since_before=cutoff):
                log.warning("run %s waited too long for the user and was stopped", run_id)
        if recovered:
            log.warning("marked %d interrupted run(s) as failed", recovered)
        return recovered

    async def _orphaned(self, run_id: uuid.UUID, session_id: uuid.UUID) -> bool:
        """Whether no replica runs the run: not this one, and nobody holds its session's lock."""
        locks = self.rt.locks
        return not self.rt.runs.here(run_id) and await locks.holder(str(session_id)) is None

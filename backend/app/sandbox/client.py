"""The backend's side of one sandbox worker: running the session's steps in it and saving
its variables, and what a step's end makes of it (its result, or a timeout, a crash, the
disk quota or kill() as results). Its process and the requests to it are connection.py's.

What the worker reports is not trusted: artifact paths are checked on the host without
following links (replies.py), and the workspace's disk quota is measured here, not inside.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from app.observability import metrics
from app.sandbox import hostfs, replies
from app.sandbox.asks import Asks, DataAnswerer
from app.sandbox.connection import REQUEST_TIMEOUT_SECONDS, SandboxError, WorkerConnection
from app.sandbox.interface import StepResult
from app.sandbox.protocol import Message
from app.sandbox.snapshot_format import RestoreReport, SnapshotReport
from app.sandbox.spawn import ServiceLauncher

logger = logging.getLogger(__name__)

STOPPED = "The step was stopped."


class SandboxStepError(Exception):
    """A step failed; the message is what the agent sees. The full result is attached."""

    def __init__(self, result: StepResult) -> None:
        """Build the message from a failed step.

        Args:
            result: The step's result (its `error` is set).
        """
        message = result.error or "The step failed."
        if result.logs:
            message += f"\n\nExecution logs (printed before the error):\n{result.logs}"
        super().__init__(message)
        self.result = result


class SandboxWorker(WorkerConnection):
    """One isolated worker that runs the code steps of one analysis session.

    Thread-safety: run(), start(), close() and set_variables() are serialised; kill() may be
    called from any thread at any time to stop a running step.
    """

    def run(
        self,
        code: str,
        answers: Sequence[str] = (),
        on_output: Callable[[str], None] | None = None,
        answerer: DataAnswerer | None = None,
    ) -> StepResult:
        """Run one code step in the worker, starting a fresh worker if none is running.

        Args:
            code: Python code (it runs in smolagents' interpreter inside the sandbox).
            answers: What the ask_user calls of the code's first statement return, in
                order (a step that goes on after the user answered; see app.agent.asking).
            on_output: Called (in this thread) with what the step prints, as it comes
                (bounded; the result's logs carry all of it, capped).
            answerer: Answers the step's asks for data (`sql()`: the project's data
                sources); the queries it ran come back as the result's `queries`.

        Returns:
            The step's result; timeouts, crashes, the disk quota and kill() are results too.

        Raises:
            SandboxUnavailable: A new worker was needed and no sandbox can be created.
            SandboxError: A new worker was needed and it did not start.
        """
        with self._lock:
            result = self._run(code, answers, on_output, answerer)
        metrics.STEP_DURATION.observe(result.duration_ms / 1000)
        if answerer is None:
            return result
        return dataclasses.replace(
            result, queries=tuple(record.to_dict() for record in answerer.take_records())
        )

    def _run(
        self,
        code: str,
        answers: Sequence[str],
        on_output: Callable[[str], None] | None,
        answerer: DataAnswerer | None,
    ) -> StepResult:
        with self._lock:
            self._ran_code = True
            with self._state_lock:
                self._stop_requested = False
            if not self.alive:
                try:
                    self.start()
                except SandboxError:
                    if self._stop_requested:  # kill() while the worker was starting
                        return replies.failure(STOPPED, time.monotonic())
                    raise
            restored = self.take_restore_report()
            started = time.monotonic()
            # What the step writes is told by file times: the clock is the file system's.
            started_ns = hostfs.file_clock_ns(self.workspace.parent)
            self.last_used = started
            try:
                request: dict[str, Any] = {"type": "run", "code": code}
                if answers:
                    request["answers"] = list(answers)
                if self.project_files is not None:
                    request["watch"] = list(self.project_files)
                reply, over_quota = self._exchange(
                    request,
                    started + self.limits.step_timeout_seconds,
                    on_output=on_output,
                    asks=Asks(answerer, self._room),
                )
            except TimeoutError:
                self._terminate()
                metrics.KILLS.labels("timeout").inc()
                seconds = f"{self.limits.step_timeout_seconds:g}"
                return replies.failure(
                    f"The code ran for more than {seconds} s and was stopped; {self._restarted}",
                    started,
                    timed_out=True,
                )
            finally:
                self.last_used = time.monotonic()
            if over_quota:
                metrics.KILLS.labels("quota").inc()
                return self._quota_exceeded(started, started_ns, killed=reply is None)
            if reply is None or reply.get("type") != "result":
                returncode = self._terminate()
                if self._stop_requested:
                    return replies.failure(STOPPED, started)
                bubblewrap = self.isolation == "bubblewrap"
                signal_number = replies.ending_signal(returncode, bubblewrap=bubblewrap)
                metrics.KILLS.labels(metrics.kill_reason(signal_number)).inc()
                return replies.failure(self._crash_message(returncode), started, crashed=True)
            return self._step_result(reply, restored, started)

    def _step_result(
        self, reply: Message, restored: RestoreReport | None, started: float
    ) -> StepResult:
        result, self.artifact_budget = replies.step_result(
            reply,
            self.limits,
            self.workspace,
            self.artifact_budget,
            restored.note() if restored is not None else None,
            started,
        )
        return result

    def _quota_exceeded(self, started: float, started_ns: int, *, killed: bool) -> StepResult:
        # The worker is stopped first, so that nothing writes while the step's files go.
        self._terminate()
        freed = hostfs.remove_newer_than(self.workspace, started_ns)
        logger.info("Sandbox: workspace %s over its quota; freed %d bytes", self.workspace, freed)
        return replies.failure(
            f"The workspace is over its disk quota ({self.limits.disk_mb} MB, SANDBOX_DISK_MB): "
            "the step was stopped and the files it wrote were removed. Write less (aggregate, "
            f"filter columns, compress) or delete files you no longer need; {self._restarted}",
            started,
            crashed=killed,
        )

    @property
    def _restarted(self) -> str:
        return replies.RESTARTED_WITH_SNAPSHOT if self.has_snapshot else replies.RESTARTED

    def _crash_message(self, returncode: int | None) -> str:
        return replies.crash_message(
            returncode,
            self.limits,
            bubblewrap=self.isolation == "bubblewrap",
            via_service=isinstance(self.launcher, ServiceLauncher),
            restarted=self._restarted,
            stderr=self._stderr,
        )

    def snapshot(self, max_bytes: int) -> SnapshotReport:
        """Have the worker save the code's variables into the workspace's snapshot folder.

        Args:
            max_bytes: The most the snapshot may take on disk.

        Returns:
            What was saved (`changed` is False when no code ran since the last snapshot).

        Raises:
            SandboxError: No worker is running, or it failed or sent nonsense.
        """
        with self._lock:
            if not self.alive:
                raise SandboxError("no sandbox worker is running")
            timeout = max(self.limits.step_timeout_seconds, REQUEST_TIMEOUT_SECONDS)
            with metrics.SNAPSHOT_SECONDS.labels("save").time():
                reply = self._request(
                    {"type": "snapshot", "max_bytes": max_bytes}, timeout, measure=True
                )
            self.last_used = time.monotonic()
            if reply is None:
                self._terminate()
                raise SandboxError("the sandbox worker stopped while saving the variables")
            if reply.get("type") == "failed":
                raise SandboxError(f"the variables could not be saved: {reply.get('error')}")
            try:
                return SnapshotReport.from_message(reply)
            except (ValueError, KeyError, TypeError) as exc:
                raise SandboxError(f"the sandbox worker's snapshot is invalid: {exc}") from exc

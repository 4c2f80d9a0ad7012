"""The runner of `workbench eval`: each task asked in a fresh session of the evaluation's
project, as a user's question would be, with nobody watching (the agent's questions are
answered, its code approved), retried while the server says "not now", and each finished
run appended to results.jsonl at once.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from app.cli import eval_attempts
from app.cli.client import ApiError, WorkbenchClient
from app.cli.eval_dabench import Task, prompt
from app.cli.eval_report import RunRecord, append_record

T = TypeVar("T")

# What the agent hears if it asks the user something: nobody is there during an evaluation.
AUTO_ANSWER = (
    "Nobody can answer questions during this evaluation: take the most likely reading of the "
    "question, say which you chose, and go on."
)
# Answers that mean "not now" rather than "no": a busy session, a rate limit, a backing
# service that is down (the server asks for a few seconds with Retry-After), or a dropped
# connection. The task waits and tries again; after this many tries the evaluation stops.
RETRY_STATUSES = {0, 409, 429, 502, 503, 504}
RETRIES = 10
FIRST_WAIT, LONGEST_WAIT = 2.0, 30.0
FINISHED = {"succeeded", "failed", "cancelled"}


class Stopped(Exception):
    """The evaluation is stopping (interrupted, or another task failed for good)."""


class SourceUnusable(Exception):
    """A data source the tasks need could not be added to the project, or does not answer."""


@dataclass(frozen=True)
class SourceLogin:
    """A database the tasks query: the project's source `name` at `url` (no password in it)."""

    name: str
    url: str
    password: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Job:
    model: str
    task: Task
    repeat: int


@dataclass
class Evaluation:
    """Runs jobs against one project, records each finished run and tidies up after."""

    client: WorkbenchClient
    results: Path
    keep: bool
    # Says why a task waits (a busy or unavailable server), where the user sees it.
    notice: Callable[[str], None] = print
    # Attempts a question (None: the project's default, one).
    attempts: int | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    file_ids: dict[str, str] = field(default_factory=dict)
    project_id: str | None = None
    _active: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- setting up and tidying up -------------------------------------------------------

    def prepare(
        self, name: str, files: dict[str, Path], sources: Sequence[SourceLogin] = ()
    ) -> None:
        """A project holding each data source and each table once, under the names the
        tasks use.

        Raises:
            SourceUnusable: the server refused a source, or its check failed.
        """
        project = self._retrying(lambda: self.client.create_project(name))
        self.project_id = str(project["id"])
        for login in sources:
            self._add_source(login)
        for file_name, path in files.items():
            stored = self._retrying(partial(self.client.upload, self.project_id, path, file_name))
            self.file_ids[file_name] = str(stored["id"])

    def _add_source(self, login: SourceLogin) -> None:
        """Add the source, checked by the server as it is added: only a ready one will do."""
        assert self.project_id is not None
        fields = {"name": login.name, "url": login.url}
        if login.password is not None:
            fields["password"] = login.password
        add = partial(self.client.create_source, self.project_id, **fields)
        try:
            source = self._retrying(add)
        except ApiError as exc:
            if exc.status in RETRY_STATUSES:
                raise
            raise SourceUnusable(f"The source {login.name} was refused: {exc}") from None
        if source.get("status") != "ready":
            raise SourceUnusable(
                f"The source {login.name} ({source.get('display_url')}) cannot be used: "
                f"{source.get('status_detail') or source.get('status')}"
            )

    def cancel_active(self) -> None:
        with self._lock:
            active = list(self._active)
        for run_id in active:
            with contextlib.suppress(ApiError):
                self.client.cancel(run_id)

    def tidy(self) -> None:
        """Delete the project, and with it the sessions and runs (unless --keep)."""
        if self.project_id and not self.keep:
            with contextlib.suppress(ApiError):
                self.client.delete_project(self.project_id)

    # -- one job ---------------------------------------------------------------------------

    def run(self, job: Job) -> RunRecord | None:
        """Run one task in a fresh session and record it; None if stopped before the end."""
        if self.stop.is_set():
            return None
        record = self._ask(job)
        if record is not None:
            with self._lock:
                append_record(self.results, record)
        return record

    def _session(self, job: Job) -> str:
        """A fresh session. It stays until the project goes at the end: deleting it the
        moment its run ends would race the server still storing the run's last events."""
        assert self.project_id is not None
        title = f"eval {job.task.id} · {job.model} · run {job.repeat}"
        session = self._retrying(partial(self.client.create_session, self.project_id, title))
        return str(session["id"])

    def _ask(self, job: Job) -> RunRecord | None:
        session_id = self._session(job)
        files = [self.file_ids[name] for name in job.task.files]
        query = prompt(job.task)
        began = time.monotonic()
        run_id: str | None = None
        run: dict[str, Any] = {}
        seq, tries = 0, 0
        while True:
            try:
                if run_id is None:
                    events = self.client.ask(
                        session_id, query, file_ids=files, model=job.model, attempts=self.attempts
                    )
                else:
                    events = self.client.follow(run_id, after=seq)
                for event in events:
                    if run_id is None:
                        run_id = self._started(str(event.data["run_id"]), job)
                    seq = max(seq, event.seq)
                    self._attend(run_id, event.event)
                if run_id is None:
                    raise ApiError(0, "The server closed the stream before the run started.")
                run = self._retrying(partial(self.client.run, run_id))
                if run.get("status") not in FINISHED:
                    raise ApiError(503, "The stream ended before the run's end was recorded.")
                break
            except ApiError as exc:
                tries += 1
                if exc.status not in RETRY_STATUSES or tries >= RETRIES:
                    raise
                self._pause(tries, f"{job.task.id} on {job.model}: {exc}")
                if run_id is None and exc.status == 0:
                    # The lost request may have started a run there: ask in a new session.
                    session_id = self._session(job)
                # Else ask again (the run never started) or re-attach to the run's events.
        with self._lock:
            self._active.pop(str(run_id), None)
        if run["status"] == "cancelled" and self.stop.is_set():
            return None
        steps = run.get("steps") or []
        return RunRecord(
            model=job.model,
            task_id=job.task.id,
            repeat=job.repeat,
            status=run["status"],
            final_answer=run.get("final_answer"),
            error=run.get("error"),
            steps=len(steps),
            step_errors=sum(1 for step in steps if step.get("error")),
            tokens_in=int(run.get("tokens_in") or 0),
            tokens_out=int(run.get("tokens_out") or 0),
            cost_usd=run.get("cost_usd"),
            wall_seconds=_wall(run, time.monotonic() - began),
            run_id=run_id,
            session_id=session_id,
            finished_at=run.get("finished_at"),
            **eval_attempts.recorded(run),
        )

    def _started(self, run_id: str, job: Job) -> str:
        with self._lock:
            self._active[run_id] = job.task.id
        if self.stop.is_set():  # started while the evaluation was being stopped
            with contextlib.suppress(ApiError):
                self.client.cancel(run_id)
        return run_id

    def _attend(self, run_id: str, event: str) -> None:
        """Nobody watches an evaluation: answer the agent's questions, approve its code."""
        try:
            if event == "input.requested":
                self.client.answer(run_id, AUTO_ANSWER)
            elif event == "approval.requested":
                self.client.decide(run_id, "approve")
        except ApiError:
            pass  # already answered, or the run ended meanwhile

    def _retrying(self, action: Callable[[], T]) -> T:
        for tries in range(1, RETRIES + 1):
            try:
                return action()
            except ApiError as exc:
                if exc.status not in RETRY_STATUSES or tries == RETRIES:
                    raise
                self._pause(tries, str(exc))
        raise AssertionError("unreachable")

    def _pause(self, tries: int, why: str) -> None:
        """Wait before the next try, longer each time (the client does not expose the
        server's Retry-After; its 5 s fall within these waits)."""
        seconds = min(FIRST_WAIT * 2 ** (tries - 1), LONGEST_WAIT)
        self.notice(f"{why}; trying again in {seconds:.0f} s ({tries}/{RETRIES - 1})")
        if self.stop.wait(seconds):
            raise Stopped()


def _wall(run: dict[str, Any], measured: float) -> float:
    """Seconds from the run's start to its end by the server's clock, else as measured."""
    try:
        start = datetime.fromisoformat(run["started_at"])
        end = datetime.fromisoformat(run["finished_at"])
    except (KeyError, TypeError, ValueError):
        return round(measured, 3)
    return round(max(0.0, (end - start).total_seconds()), 3)

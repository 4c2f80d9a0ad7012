"""Following a run to its end: showing its events, answering what it asks, and coming back
when the connection drops (GET /runs/{id}/events?after=<last seq seen>)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from app.cli.client import ApiError, Event, WorkbenchClient
from app.cli.output import Failure
from app.cli.replies import Replies
from app.cli.stream import View

RECONNECTS = 5
ACTIVE = ("queued", "running", "waiting_input", "waiting_approval")
# What a shell reports for a command stopped by Ctrl-C (128 + SIGINT).
INTERRUPTED = 130


def exit_with(end: dict[str, Any]) -> None:
    """Exit as the run ended: 0 when it succeeded, else 1 with its error."""
    status = end.get("status")
    if status == "succeeded":
        return
    reason = end.get("error") or "no reason given"
    if status == "cancelled":
        raise Failure(f"The run was stopped: {reason}")
    raise Failure(f"The run failed: {reason}")


class RunWatcher:
    """One run as the terminal follows it.

    Args:
        client: The API.
        view: Shows the events (for people or as JSON lines).
        replies: Where answers and review decisions come from.
    """

    def __init__(self, client: WorkbenchClient, view: View, replies: Replies):
        self.client = client
        self.view = view
        self.replies = replies
        self.run_id: str | None = None
        self.last_seq = 0

    def watch(self, events: Iterator[Event]) -> dict[str, Any]:
        """Follow `events` (and the run's own stream after a drop) to run.finished; its data."""
        retries = 0
        while True:
            try:
                for event in events:
                    retries = 0
                    self._take(event)
                    if event.event == "run.finished":
                        return event.data
            except ApiError as exc:
                if exc.status != 0 or self.run_id is None or retries >= RECONNECTS:
                    raise
            finally:
                close = getattr(events, "close", None)
                if close is not None:
                    close()
            if self.run_id is None:
                raise Failure("The server ended the stream before the run started.")
            retries += 1
            self.view.notice(f"Lost the run's stream; reconnecting ({retries}/{RECONNECTS})…")
            time.sleep(min(2**retries, 10))
            events = self.client.follow(self.run_id, after=self.last_seq)

    def cancel(self, session_id: str | None) -> None:
        """Stop the run on the server (or, before its first event, the session's active run)."""
        run_ids = [self.run_id] if self.run_id else []
        if not run_ids and session_id:
            run_ids = [r["id"] for r in self.client.runs(session_id) if r["status"] in ACTIVE]
        for run_id in run_ids:
            try:
                self.client.cancel(run_id)
            except ApiError as exc:
                if exc.status != 409:  # 409: it had ended already
                    raise

    # -- one event -------------------------------------------------------------------------

    def _take(self, event: Event) -> None:
        self.last_seq = max(self.last_seq, event.seq)
        if event.data.get("run_id"):
            self.run_id = str(event.data["run_id"])
        self.view.show(event)
        if event.event == "input.requested":
            self._answer(event)
        elif event.event == "approval.requested":
            self._review(event)

    def _still_waits(self, kind: str, step: int) -> bool:
        """Whether the run still waits for this (a replayed request may be settled)."""
        assert self.run_id is not None
        pending = self.client.run(self.run_id).get("pending") or {}
        return pending.get("kind") == kind and pending.get("step") == step

    def _answer(self, event: Event) -> None:
        if not self._still_waits("input", int(event.data["step"])):
            return
        with self.view.paused():
            answer = self.replies.answer(str(event.data.get("question", "")))
        if answer is None:
            raise self._unanswered(f'workbench runs answer {self.run_id} "…"')
        self._settle(lambda run_id: self.client.answer(run_id, answer))

    def _review(self, event: Event) -> None:
        step = int(event.data["step"])
        if not self._still_waits("approval", step):
            return
        with self.view.paused():
            decision = self.replies.review(step, str(event.data.get("code", "")))
        if decision is None:
            raise self._unanswered(f"workbench runs follow {self.run_id}")
        self._settle(
            lambda run_id: self.client.decide(
                run_id, decision.decision, code=decision.code, feedback=decision.feedback
            )
        )

    def _settle(self, send: Callable[[str], object]) -> None:
        """Send the user's reply; someone else may have replied first (409), which is fine."""
        assert self.run_id is not None
        try:
            send(self.run_id)
        except ApiError as exc:
            if exc.status != 409:
                raise
            self.view.notice(exc.detail)

    def _unanswered(self, how: str) -> Failure:
        return Failure(
            f"No reply on stdin, so run {self.run_id} waits for one: `{how}` gives it, "
            f"`workbench runs cancel {self.run_id}` stops the run."
        )

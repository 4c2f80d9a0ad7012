"""Admission: one path for a new question and for a reply to a run that waits.

Each takes the session's lock (or is refused at once), checks what it must, claims a sandbox
slot (or a place in line), records the run and its first events; what fails on the way
gives back everything it took.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from app.agent.model import resolve_model
from app.attempts.estimate import per_attempt, refuse_over
from app.errors import AppError
from app.models import Run, RunStatus, Session
from app.models.base import utcnow
from app.runs import budget, events
from app.runs.errors import AnalysisDisabled, NotWaiting, SessionBusy, UnknownFiles
from app.runs.execution import Admitted, Runtime, announce_start
from app.runs.recorder import EventRecorder
from app.runs.repository import RunRepository
from app.runs.sandboxes import SlotTicket
from app.runs.schemas import QueryRequest
from app.runs.state import Reply, Resume

SANDBOX_RETRY_SECONDS = 30


class _Claim:
    """The slot an admission claimed, to give back if the admission fails."""

    def __init__(self, rt: Runtime, session_id: uuid.UUID):
        self.rt, self.session_id = rt, session_id
        self.ticket: SlotTicket | None = None

    def __call__(self, owner_id: uuid.UUID) -> SlotTicket:
        self.ticket = self.rt.sandboxes.claim(self.session_id, owner_id)
        return self.ticket

    def give_back(self) -> None:
        if self.ticket is not None:
            self.rt.sandboxes.withdraw(self.ticket)
            self.rt.sandboxes.release(self.session_id)


class Admission:
    def __init__(self, rt: Runtime, requests: RunRepository):
        """Args:
        requests: The repository on the database sessions of work a request waits for.
        """
        self.rt = rt
        self.requests = requests

    async def question(
        self, session: Session, body: QueryRequest, asker: tuple[uuid.UUID, str]
    ) -> Admitted:
        """Let `asker`'s new question in: the run, running (run.started) or queued
        (run.queued); the sandbox slots are shared fairly between askers. `asker`: the id
        and email of who asks (the request's user)."""
        model_id = resolve_model(self.rt.settings, body.model)
        await self._sandbox_available()
        busy = SessionBusy(
            "This session is still answering another question; wait for it or stop it."
        )

        async def admit(token: str, claim: _Claim) -> Admitted:
            if body.file_ids:
                missing = await self.requests.missing_files(session.project_id, body.file_ids)
                if missing:
                    raise UnknownFiles(missing)
            waiting = await self.requests.waiting_status(session.id)
            if waiting is not None:
                raise SessionBusy(
                    "This session's question is waiting for your "
                    + ("answer" if waiting == RunStatus.waiting_input else "approval")
                    + ": answer it, or stop that run, before asking another."
                )
            project, used = await self.requests.project_budget(session.project_id)
            left = budget.remaining(project, used)  # a project past its budget takes none
            attempts = body.attempts or project.default_attempts or 1
            if attempts > 1:  # refused up front if they would likely cross the budget
                estimate = await per_attempt(self.requests.factory, project.id)
                refuse_over(left, estimate, attempts)
            asker_id, _ = asker
            ticket = claim(asker_id)
            granted = ticket.granted.is_set()
            run = Run(
                session_id=session.id,
                status=RunStatus.running if granted else RunStatus.queued,
                user_id=asker_id,
                query=body.query,
                model=model_id,
                file_ids=[str(f) for f in body.file_ids],
                started_at=utcnow() if granted else None,
            )
            admitted = await self._record(run, session.project_id, asker, token, ticket)
            admitted.attempts = attempts
            return admitted

        return await self._holding_lock(session.id, busy, admit)

    async def cell(self, session: Session, run: Run, asker: tuple[uuid.UUID, str]) -> Admitted:
        """Let `asker`'s cell in (`run`, its row as app.runs.cells made it): the same lock,
        line for sandbox slots and first events as a question, but no model and no budget
        (nothing is spent)."""
        await self._sandbox_available()
        busy = SessionBusy("This session is still running something; wait for it or stop it.")

        async def admit(token: str, claim: _Claim) -> Admitted:
            if await self.requests.waiting_status(session.id) is not None:
                raise SessionBusy(
                    "This session's question is waiting for you: answer it, or stop that "
                    "run, before running a cell."
                )
            ticket = claim(asker[0])
            granted = ticket.granted.is_set()
            run.status = RunStatus.running if granted else RunStatus.queued
            run.started_at = utcnow() if granted else None
            return await self._record(run, session.project_id, asker, token, ticket)

        return await self._holding_lock(session.id, busy, admit)

    async def _record(
        self,
        run: Run,
        project_id: uuid.UUID,
        asker: tuple[uuid.UUID, str],
        token: str,
        ticket: SlotTicket,
    ) -> Admitted:
        """Record a new run (its row, then run.started, or run.queued while it waits)."""
        await self.requests.add_run(run, project_id, asker)
        recorder = EventRecorder(run.id, self.rt.events, self.rt.repository)
        if ticket.granted.is_set():
            await announce_start(run, recorder)
        else:
            await recorder.emit(events.RunQueued(position=ticket.position))
        return Admitted(run, recorder, token, ticket)

    async def _sandbox_available(self) -> None:
        sandbox = await self.rt.sandboxes.status()
        if not sandbox.available:
            raise AnalysisDisabled(
                "Analysis is disabled: "
                + sandbox.detail
                + (f". Fix: {sandbox.fix}." if sandbox.fix else "."),
                code="sandbox_unavailable",
                retry_after=SANDBOX_RETRY_SECONDS,
            )

    async def reply(self, run_id: uuid.UUID, reply: Reply) -> Admitted:
        """Let a reply to a waiting run in (on this replica, whichever started the run): the
        run goes on from where it waited (input.received or approval.received)."""
        waiting = reply.waits_for
        if waiting == RunStatus.waiting_input:
            not_waiting = NotWaiting(
                "This run is not waiting for an answer.", code="not_waiting_input"
            )
        else:
            not_waiting = NotWaiting(
                "This run is not waiting for approval.", code="not_waiting_approval"
            )
        repository = self.rt.repository
        found = await repository.get_run(run_id)
        if found is None or found.status != waiting:
            raise not_waiting

        async def admit(token: str, claim: _Claim) -> Admitted:
            taken = await repository.take_reply(
                run_id, waiting, lambda p: reply.note(p).data(), reply.by
            )
            if taken is None:
                raise not_waiting
            run, owner, memory, pending = taken
            ticket = claim(owner)
            if ticket.granted.is_set():
                await repository.mark_running(run_id)
                run.status = RunStatus.running
            last = await repository.last_seq(run_id)
            recorder = EventRecorder(run_id, self.rt.events, repository, last_seq=last)
            await recorder.emit(reply.note(pending))
            if not ticket.granted.is_set():
                await recorder.emit(events.RunQueued(position=ticket.position))
            return Admitted(run, recorder, token, ticket, Resume(memory, pending, reply))

        # Another replica may be taking a reply to this run now: then it does not wait.
        return await self._holding_lock(found.session_id, not_waiting, admit)

    async def _holding_lock(
        self,
        session_id: uuid.UUID,
        busy: AppError,
        admit: Callable[[str, _Claim], Awaitable[Admitted]],
    ) -> Admitted:
        """`admit(token, claim)` holding the session's lock (`busy` if another holds it);
        if it fails, its slot and the lock are given back."""
        token = await self.rt.locks.acquire(str(session_id), self.rt.lock_ttl)
        if token is None:
            raise busy
        claim = _Claim(self.rt, session_id)
        try:
            return await admit(token, claim)
        except BaseException:
            claim.give_back()
            await self.rt.locks.release(str(session_id), token)
            raise

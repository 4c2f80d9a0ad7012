"""The audit log of a project: who did what, as events that are only ever added.

`record` adds an event in the caller's transaction, so an event is kept exactly when the
change it tells of is (a refused or failed change leaves none). Each event names its actor
(their email as it was then), its action, what it was done to, one readable sentence
(`summary`) and a small JSON object of particulars (`detail`). Owners read the log through
`GET /projects/{id}/audit`.

Nothing updates or deletes an event: the rows have no foreign keys, so they outlive the
project (`project.deleted` is its last event) and the users they name, and on PostgreSQL a
trigger refuses UPDATE and DELETE on the table (the migration that made it).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit_chain
from app.db import paginate
from app.models import AuditEvent, User
from app.models.base import utcnow
from app.schemas import PersonOut
from app.sessions.export.markdown_text import human_size

# How much of a question an event keeps (its summary shows less).
QUERY_CHARS = 200
SUMMARY_QUERY_CHARS = 80


class Action(StrEnum):
    project_created = "project.created"
    project_updated = "project.updated"
    project_budget_changed = "project.budget_changed"
    project_deleted = "project.deleted"
    member_added = "member.added"
    member_changed = "member.changed"
    member_removed = "member.removed"
    file_uploaded = "file.uploaded"
    file_replaced = "file.replaced"
    file_deleted = "file.deleted"
    source_added = "source.added"
    source_changed = "source.changed"
    source_deleted = "source.deleted"
    knowledge_created = "knowledge.created"
    knowledge_updated = "knowledge.updated"
    knowledge_approved = "knowledge.approved"
    knowledge_rejected = "knowledge.rejected"
    knowledge_deleted = "knowledge.deleted"
    session_created = "session.created"
    session_renamed = "session.renamed"
    session_autonomy_changed = "session.autonomy_changed"
    session_deleted = "session.deleted"
    session_branched = "session.branch"
    run_asked = "run.asked"
    run_ended = "run.ended"
    run_stopped = "run.stopped"
    review_decided = "review.decided"
    input_answered = "input.answered"
    share_created = "share.created"
    share_revoked = "share.revoked"
    share_opened = "share.opened"
    export_downloaded = "export.downloaded"
    file_downloaded = "file.downloaded"
    check_created = "check.created"
    check_updated = "check.updated"
    check_deleted = "check.deleted"
    check_run_started = "check_run.started"
    check_run_finished = "check_run.finished"
    knowledge_proposed = "knowledge.proposed"
    comment_added = "comment.added"
    comment_deleted = "comment.deleted"
    invite_created = "invite.created"
    invite_revoked = "invite.revoked"
    invite_accepted = "invite.accepted"
    job_created = "job.create"
    job_updated = "job.update"
    job_deleted = "job.delete"
    job_run_started = "job_run.started"
    job_run_finished = "job_run.finished"
    job_repair_proposed = "job.repair_proposed"
    job_repair_approved = "job.repair_approved"
    job_repair_rejected = "job.repair_rejected"
    job_repair_applied = "job.repair_applied"


# Who acted: a user, a user's id (their email is looked up), a user's id and email already
# known, or None (the workbench itself).
Actor = User | uuid.UUID | tuple[uuid.UUID, str | None] | None
# What it was done to: its kind ("file", "member", "run", …) and its id, if it has one.
Subject = tuple[str, uuid.UUID | str | None]


async def record(
    db: AsyncSession,
    project_id: uuid.UUID,
    actor: Actor,
    action: Action,
    subject: Subject,
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    """Add an event to the project's log, in the caller's transaction.

    Args:
        db: The session whose transaction makes the change the event tells of.
        project_id: The project it happened in.
        actor: Who did it.
        action: What they did.
        subject: What they did it to.
        detail: Its particulars (JSON values; the summary is written from them).
    """
    actor_id, email = await _who(db, actor)
    detail = dict(detail or {})
    kind, subject_id = subject
    event = AuditEvent(
        id=uuid.uuid4(),
        at=utcnow(),
        project_id=project_id,
        actor_id=actor_id,
        actor_email=email,
        action=action.value,
        subject_type=kind,
        subject_id=None if subject_id is None else str(subject_id),
        summary=summary(action, email, detail),
        detail=detail,
    )
    await audit_chain.link(db, event)
    db.add(event)
    return event


async def record_unless_recent(
    db: AsyncSession,
    project_id: uuid.UUID,
    action: Action,
    subject: Subject,
    detail: dict[str, Any],
    within: timedelta,
) -> AuditEvent | None:
    """Add an event by the workbench itself unless the same action on the same subject was
    recorded in the last `within` (a link opened again and again makes one event an hour,
    not one a request). The check is made with the project's chain locked, so two replicas
    never both record it."""
    await audit_chain.lock_head(db, project_id)
    kind, subject_id = subject
    recent = await db.scalar(
        select(AuditEvent.id)
        .where(
            AuditEvent.project_id == project_id,
            AuditEvent.action == action.value,
            AuditEvent.subject_type == kind,
            AuditEvent.subject_id == str(subject_id),
            AuditEvent.at > utcnow() - within,
        )
        .limit(1)
    )
    if recent is not None:
        return None
    return await record(db, project_id, None, action, subject, detail)


async def _who(db: AsyncSession, actor: Actor) -> tuple[uuid.UUID | None, str | None]:
    if isinstance(actor, User):
        return actor.id, actor.email
    if actor is None:
        return None, None
    if isinstance(actor, tuple):
        return actor
    return actor, await db.scalar(select(User.email).where(User.id == actor))


async def events(
    db: AsyncSession, project_id: uuid.UUID, limit: int, offset: int, action: str | None = None
) -> tuple[list[AuditEvent], int]:
    """A page of the project's events, newest first.

    Args:
        action: Only this action (`member.added`), or a family of them (`member`).
    """
    query = select(AuditEvent).where(AuditEvent.project_id == project_id)
    if action:
        if "." in action:
            query = query.where(AuditEvent.action == action)
        else:
            query = query.where(AuditEvent.action.startswith(f"{action}.", autoescape=True))
    query = query.order_by(AuditEvent.at.desc(), AuditEvent.id.desc())
    return await paginate(db, query, limit, offset)


class AuditEventOut(BaseModel):
    id: uuid.UUID
    at: datetime
    actor: PersonOut | None = Field(description="Who did it (null: the workbench itself)")
    action: str = Field(description="What was done: " + ", ".join(a.value for a in Action))
    subject_type: str = Field(description="What it was done to: project, member, file, …")
    subject_id: str | None
    summary: str = Field(description="One readable sentence")
    detail: dict[str, Any] = Field(description="Its particulars (a small JSON object)")

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventOut:
        actor = None
        if event.actor_id is not None:
            actor = PersonOut(user_id=event.actor_id, email=event.actor_email or "")
        return cls(
            id=event.id,
            at=event.at,
            actor=actor,
            action=event.action,
            subject_type=event.subject_type,
            subject_id=event.subject_id,
            summary=event.summary,
            detail=event.detail,
        )


class AuditVerification(BaseModel):
    intact: bool = Field(description="Whether every event is as it was recorded, in order")
    events: int = Field(description="The events that hold, in order (up to the first bad one)")
    head: str = Field(
        description="The last of them's hash: noted elsewhere, a later verify that ends on "
        "another one after as many events shows a chain rewritten from the start"
    )
    sentence: str = Field(
        description="“intact: N events”, or which event was changed, removed or inserted"
    )
    seq: int | None = Field(None, description="The first bad event's number in the chain")
    event_id: uuid.UUID | None = Field(None, description="The first bad event's id, if it has one")

    @classmethod
    def of(cls, verdict: audit_chain.Verdict) -> AuditVerification:
        return cls.model_validate(verdict, from_attributes=True)  # properties included


# -- summaries ------------------------------------------------------------------------------


WORKBENCH = "The workbench"  # the actor of what no user did


def summary(action: Action, email: str | None, detail: dict[str, Any]) -> str:
    """One sentence that says what happened ("ana@x.org added bob@x.org as editor")."""
    return SENTENCES[action](email or WORKBENCH, detail) + "."


def _quoted(text: Any, limit: int = 120) -> str:
    flat = " ".join(str(text or "").split())
    return f"“{flat if len(flat) <= limit else flat[: limit - 1].rstrip() + '…'}”"


def _size(detail: dict[str, Any]) -> str:
    return human_size(int(detail.get("size") or 0))


def _budget(usd: Any, tokens: Any) -> str:
    parts = [f"${float(usd):,.2f}"] if usd is not None else []
    parts += [f"{int(tokens):,} tokens"] if tokens is not None else []
    return " and ".join(parts) or "none"


def _project_updated(who: str, d: dict[str, Any]) -> str:
    changes = []
    if "name" in d:
        old, new = d["name"]
        changes.append(f"renamed the project from {_quoted(old)} to {_quoted(new)}")
    if d.get("description"):
        changes.append("changed the project's description")
    return f"{who} " + (" and ".join(changes) or "changed nothing in the project")


def _budget_changed(who: str, d: dict[str, Any]) -> str:
    usd, tokens = d.get("budget_usd", [None, None]), d.get("budget_tokens", [None, None])
    before, after = _budget(usd[0], tokens[0]), _budget(usd[1], tokens[1])
    return f"{who} set the project's budget to {after} (it was {before})"


def _member_removed(who: str, d: dict[str, Any]) -> str:
    if d.get("left"):
        return f"{who} left the project (they were {d['role']})"
    return f"{who} removed {d['email']} (they were {d['role']})"


def _run_ended(who: str, d: dict[str, Any]) -> str:
    cost = d.get("cost_usd")
    spent = f"{d.get('tokens_in') or 0:,} tokens in, {d.get('tokens_out') or 0:,} out, " + (
        "no price known" if cost is None else f"${float(cost):,.4f}"
    )
    whose = "A question" if who == WORKBENCH else f"{who}'s question"
    return f"{whose} ended {d['status']} ({spent})"


def _shared(who: str, d: dict[str, Any]) -> str:
    if d.get("job_id"):
        until = str(d.get("expires_at", ""))[:10]
        name = _quoted(d.get("job"))
        return f"{who} made the link to the job {name}'s latest run, until {until}"
    count = len(d.get("runs") or [])
    questions = f"{count} question{'' if count == 1 else 's'}"
    until = str(d.get("expires_at", ""))[:10]
    how = "re-issued the shared link to" if d.get("was") else "shared"
    title = _quoted(d.get("title"))
    return f"{who} {how} {questions} of the session {title} by a link until {until}"


def _check_run_finished(who: str, d: dict[str, Any]) -> str:
    counts = f"{d['passed']} of {d['total']} passed, {d['failed']} failed, {d['errors']} erred"
    if d.get("status") == "failed":
        return f"The checks run with {d['model']} stopped ({counts}): {d.get('error') or ''}"
    return f"The checks run with {d['model']} finished: {counts}"


_AUTONOMY = {
    "auto": "run code at once",
    "review_repairs": "review repairs before they run",
    "review": "review code before it runs",
}

_DECIDED = {"approve": "approved", "edit": "edited and ran", "reject": "rejected"}

SENTENCES: dict[Action, Callable[[str, dict[str, Any]], str]] = {
    Action.project_created: lambda who, d: f"{who} created the project {_quoted(d['name'])}",
    Action.project_updated: _project_updated,
    Action.project_budget_changed: _budget_changed,
    Action.project_deleted: lambda who, d: f"{who} deleted the project {_quoted(d['name'])}",
    Action.member_added: lambda who, d: f"{who} added {d['email']} as {d['role']}",
    Action.member_changed: lambda who, d: (
        f"{who} made {d['email']} {d['role']} (they were {d['was']})"
    ),
    Action.member_removed: _member_removed,
    Action.file_uploaded: lambda who, d: f"{who} uploaded {d['name']} ({_size(d)})",
    Action.file_replaced: lambda who, d: (
        f"{who} uploaded version {d['version']} of {d['name']} ({_size(d)})"
    ),
    Action.file_deleted: lambda who, d: f"{who} deleted the file {d['name']}",
    Action.source_added: lambda who, d: f"{who} added the data source {d['name']} ({d['kind']})",
    Action.source_changed: lambda who, d: (
        f"{who} changed the data source {d['name']}: {', '.join(d.get('fields') or ['nothing'])}"
    ),
    Action.source_deleted: lambda who, d: f"{who} deleted the data source {d['name']}",
    Action.knowledge_created: lambda who, d: (
        f"{who} added the {d['kind']} {_quoted(d['title'])} to the project's knowledge"
        + (" (verified from a run)" if d.get("run_id") else "")
    ),
    Action.knowledge_updated: lambda who, d: (
        f"{who} changed the {d['kind']} {_quoted(d['title'])}: "
        f"{', '.join(d.get('fields') or ['nothing'])}"
    ),
    Action.knowledge_approved: lambda who, d: (
        f"{who} approved the {d['kind']} {_quoted(d['title'])}"
    ),
    Action.knowledge_rejected: lambda who, d: (
        f"{who} rejected the {d['kind']} {_quoted(d['title'])}"
    ),
    Action.knowledge_deleted: lambda who, d: f"{who} deleted the {d['kind']} {_quoted(d['title'])}",
    Action.session_created: lambda who, d: f"{who} opened the session {_quoted(d['title'])}",
    Action.session_deleted: lambda who, d: (
        f"{who} deleted the session {_quoted(d['title'])}"
        + (f" and its {d['branches_deleted']} branch(es)" if d.get("branches_deleted") else "")
        + (f", keeping its {d['branches_kept']} branch(es)" if d.get("branches_kept") else "")
    ),
    Action.session_branched: lambda who, d: (
        f"{who} branched the session {_quoted(d['parent_title'])} after "
        f"{_quoted(d.get('after_query'), 80)} into {_quoted(d['title'])}"
    ),
    Action.session_renamed: lambda who, d: (
        f"{who} renamed the session {_quoted(d['title'][0])} to {_quoted(d['title'][1])}"
    ),
    Action.session_autonomy_changed: lambda who, d: (
        f"{who} set the session {_quoted(d['title'])} to {_AUTONOMY.get(d['autonomy'][1], '?')} "
        f"(it was {_AUTONOMY.get(d['autonomy'][0], '?')})"
    ),
    Action.run_asked: lambda who, d: (
        f"{who} asked {_quoted(d['query'], SUMMARY_QUERY_CHARS)} with {d['model']}"
    ),
    Action.run_ended: _run_ended,
    Action.run_stopped: lambda who, d: f"{who} stopped {_quoted(d.get('query'), 80)}",
    Action.review_decided: lambda who, d: (
        f"{who} {_DECIDED.get(d['decision'], d['decision'])} the code of step {d['step']}"
    ),
    Action.input_answered: lambda who, d: (
        f"{who} answered the agent's question at step {d['step']}"
    ),
    Action.share_created: _shared,
    Action.share_revoked: lambda who, d: (
        f"{who} revoked a shared link to the session {_quoted(d.get('title'))}"
    ),
    Action.share_opened: lambda who, d: (
        f"A shared link to the session {_quoted(d.get('title'))} was opened"
        f" (made by {d.get('by') or 'a former user'}; one event an hour at most)"
    ),
    Action.knowledge_proposed: lambda who, d: (
        f"The review pass proposed {len(d.get('titles') or [])} knowledge item(s) from "
        f"{_quoted(d.get('query'), SUMMARY_QUERY_CHARS)}"
        + (f" ({d['flagged']} flagged)" if d.get("flagged") else "")
    ),
    Action.file_downloaded: lambda who, d: (
        f"{who} downloaded {d['name']}"
        + (f" (version {d['version']})" if d.get("version") else "")
        + f" ({_size(d)})"
    ),
    Action.export_downloaded: lambda who, d: (
        f"{who} downloaded the {d.get('of', 'session')} {_quoted(d.get('title'))} as {d['format']}"
    ),
    Action.check_created: lambda who, d: f"{who} added the check {_quoted(d['question'], 80)}",
    Action.check_updated: lambda who, d: (
        f"{who} changed the {' and '.join(d.get('fields') or ['nothing'])} of the check "
        f"{_quoted(d['question'], 80)}"
    ),
    Action.check_deleted: lambda who, d: f"{who} deleted the check {_quoted(d['question'], 80)}",
    Action.check_run_started: lambda who, d: (
        f"{who} ran the project's {d['total']} check{'' if d['total'] == 1 else 's'} "
        f"with {d['model']}"
    ),
    Action.check_run_finished: _check_run_finished,
    Action.comment_added: lambda who, d: (
        f"{who} {'replied' if d.get('reply') else 'commented'} {_quoted(d.get('body'), 80)}"
    ),
    Action.comment_deleted: lambda who, d: (
        f"{who} deleted the comment {_quoted(d.get('body'), 80)}"
        + (
            f" and its {d['replies']} repl{'y' if d['replies'] == 1 else 'ies'}"
            if d.get("replies")
            else ""
        )
    ),
    Action.invite_created: lambda who, d: (
        f"{who} invited {d['email']} as {d['role']} (the link works until "
        f"{str(d.get('expires_at', ''))[:10]})"
    ),
    Action.invite_revoked: lambda who, d: f"{who} revoked the invite of {d['email']}",
    Action.invite_accepted: lambda who, d: f"{who} accepted their invite and joined as {d['role']}",
    Action.job_created: lambda who, d: (
        f"{who} made the job {_quoted(d['name'], 80)} from {d['runs']} run"
        f"{'' if d['runs'] == 1 else 's'} of a session"
    ),
    Action.job_updated: lambda who, d: (
        f"{who} changed the {' and '.join(d.get('fields') or ['nothing'])} of the job "
        f"{_quoted(d['name'], 80)}"
    ),
    Action.job_deleted: lambda who, d: f"{who} deleted the job {_quoted(d['name'], 80)}",
    Action.job_run_started: lambda who, d: f"{who} ran the job {_quoted(d['name'], 80)}",
    Action.job_run_finished: lambda who, d: (
        f"The job {_quoted(d['name'], 80)} ended {d['status']}"
        + (f": {d['error']}" if d.get("error") else "")
    ),
    Action.job_repair_proposed: lambda who, d: (
        f"The workbench proposed a repair of the job {_quoted(d['name'], 80)} after it failed"
        + (f": {d['reason']}" if d.get("reason") else "")
    ),
    Action.job_repair_approved: lambda who, d: (
        f"{who} approved the repair of the job {_quoted(d['name'], 80)}"
    ),
    Action.job_repair_rejected: lambda who, d: (
        f"{who} rejected the repair of the job {_quoted(d['name'], 80)}"
    ),
    Action.job_repair_applied: lambda who, d: (
        f"The job {_quoted(d['name'], 80)} runs its repaired code from now on"
        + (" (its autonomy is auto)" if d.get("auto") else "")
    ),
}


def query_detail(query: str) -> str:
    """What an event keeps of a question: its first QUERY_CHARS characters."""
    return query[:QUERY_CHARS]

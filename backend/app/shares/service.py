"""Read-only links to a session's report (issue 26).

An editor shares some of a session's runs: the link's token is 256 random bits, shown
once, and only its SHA-256 is stored. Whoever opens the link sees the report of those runs
(the HTML export), nothing else: no other run, no file beyond what the report attaches, no
API. A link works until it expires or is revoked, or its author loses access: removed from the
project, made a viewer (who cannot make links), or disabled. Every replica reads the same
rows when the link is opened (one join to the author's membership), so each of these holds
everywhere at once. An owner re-issues a link whose author lost access: a new link of
their own to the same questions, until the same day, and the old one revoked.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.audit import Action
from app.auth import security
from app.branches import lineage
from app.errors import NotFound, Unprocessable
from app.models import Project, ProjectMember, Run, RunStatus, Session, Share, User
from app.models.base import utcnow
from app.ownership import Role, one_visible
from app.runs.state import ACTIVE
from app.shares.schemas import ShareCreate

# What a link's token looks like (security.new_share_token); anything else is not looked up.
TOKEN = re.compile(r"[A-Za-z0-9_-]{32,64}")


# Where a link stands (ShareOut.status).
ShareStatus = Literal["active", "revoked", "expired", "author_lost_access"]
# The roles that make links: a link works while its author still has one of them.
AUTHORS = (Role.editor.name, Role.owner.name)


class UnknownRuns(Unprocessable):
    code = "unknown_run"


class ShareExpired(Unprocessable):
    code = "share_expired"


async def get_owned(db: AsyncSession, user: User, share_id: uuid.UUID, need: Role) -> Share:
    """The share if the user has `need` in its project (404 / 403 otherwise)."""
    query = (
        select(Share)
        .join(Session, Session.id == Share.session_id)
        .join(Project, Project.id == Session.project_id)
        .where(Share.id == share_id)
    )
    missing = NotFound("No such shared link.", code="share_not_found")
    share: Share = await one_visible(db, user, query, missing, need)
    return share


async def create(
    db: AsyncSession, session: Session, data: ShareCreate, by: User
) -> tuple[Share, str]:
    """A new link to the report of the session's runs `data.runs` (default: those the report
    shows now), made by `by`.

    Returns:
        The share, and its token (shown to the user this once; never stored).

    Raises:
        UnknownRuns: a run is not the session's, or there is nothing to share.
    """
    runs = await _runs(db, session, data.runs)
    until = utcnow() + timedelta(days=data.expires_in_days)
    return await _issue(db, session, [str(r) for r in runs], until, by, {})


async def reissue(db: AsyncSession, share: Share, by: User) -> tuple[Share, str]:
    """A new link made by `by` (an owner) to the same questions until the same day, the old
    one revoked: for a link whose author lost access, or one an owner wants to take over.

    Raises:
        ShareExpired: The link has expired (make a new one).
    """
    if share.expires_at <= utcnow():
        raise ShareExpired(
            "This link has expired: make a new one to share these questions again.",
            code="share_expired",
        )
    await revoke(db, share, by)
    session = await db.get(Session, share.session_id)
    assert session is not None  # a share goes with its session (cascade)
    return await _issue(db, session, list(share.runs), share.expires_at, by, {"was": str(share.id)})


async def _issue(
    db: AsyncSession,
    session: Session,
    runs: list[str],
    until: datetime,
    by: User,
    more: dict[str, str],
) -> tuple[Share, str]:
    token = security.new_share_token()
    share = Share(
        session_id=session.id,
        token_hash=security.hash_token(token),
        runs=runs,
        created_by=by.id,
        expires_at=until,
    )
    db.add(share)
    await db.flush()
    about = {
        "share_id": str(share.id),
        "session_id": str(session.id),
        "title": session.title,
        "runs": share.runs,
        "expires_at": share.expires_at.isoformat(),
    } | more
    await audit.record(db, session.project_id, by, Action.share_created, ("share", share.id), about)
    return share, token


async def _runs(
    db: AsyncSession, session: Session, chosen: list[uuid.UUID] | None
) -> list[uuid.UUID]:
    """The runs a new link shows, in the session's order."""
    chain = await lineage.segments(db, session)  # a branch's link shows its past too
    every = (
        await db.execute(
            select(Run.id, Run.status)
            .where(lineage.history_clause(session, chain))
            .order_by(Run.created_at, Run.id)
        )
    ).all()
    if chosen is not None:
        unknown = sorted(str(r) for r in set(chosen) - {run_id for run_id, _ in every})
        if unknown:
            raise UnknownRuns(f"These runs are not in this session: {', '.join(unknown)}.")
        if not chosen:
            raise UnknownRuns("Choose at least one question to share.")
        return [run_id for run_id, _ in every if run_id in set(chosen)]
    # As the report: the questions answered, or (none was) every one that ended.
    ended = [(run_id, status) for run_id, status in every if status not in ACTIVE]
    shown = [run_id for run_id, status in ended if status == RunStatus.succeeded]
    shown = shown or [run_id for run_id, _ in ended]
    if not shown:
        raise UnknownRuns(
            "This session has no finished question to share yet.", code="nothing_to_share"
        )
    return shown


async def list_for_session(
    db: AsyncSession, session: Session, limit: int, offset: int
) -> tuple[list[tuple[Share, User | None, ShareStatus]], int]:
    """The session's links (revoked and expired ones too) with who made them and where each
    stands, newest first."""
    total = await db.scalar(
        select(func.count()).select_from(Share).where(Share.session_id == session.id)
    )
    rows = await db.execute(
        select(Share, User, ProjectMember.role)
        .outerjoin(User, User.id == Share.created_by)
        .outerjoin(
            ProjectMember,
            (ProjectMember.project_id == session.project_id)
            & (ProjectMember.user_id == Share.created_by),
        )
        .where(Share.session_id == session.id)
        .order_by(Share.created_at.desc(), Share.id.desc())
        .limit(limit)
        .offset(offset)
    )
    found: list[tuple[Share, User | None, ShareStatus]] = [
        (share, user, status(share, user, role)) for share, user, role in rows.all()
    ]
    return found, int(total or 0)


def status(share: Share, author: User | None, role: str | None) -> ShareStatus:
    """Where a link stands, given its author (None: deleted) and their role now."""
    if share.revoked_at is not None:
        return "revoked"
    if share.expires_at <= utcnow():
        return "expired"
    if author is None or author.disabled or role not in AUTHORS:
        return "author_lost_access"
    return "active"


async def revoke(db: AsyncSession, share: Share, by: User) -> None:
    """End the link now (revoking it again changes nothing)."""
    if share.revoked_at is not None:
        return
    share.revoked_at = utcnow()
    session = await db.get(Session, share.session_id)
    assert session is not None  # a share goes with its session (cascade)
    about = {"share_id": str(share.id), "session_id": str(session.id), "title": session.title}
    await audit.record(db, session.project_id, by, Action.share_revoked, ("share", share.id), about)
    await db.flush()


async def opened(db: AsyncSession, token: str) -> tuple[Share, Session] | None:
    """The link a token opens and its session; None when it opens nothing (unknown,
    revoked, expired or its author lost access: the caller cannot tell which)."""
    if not TOKEN.fullmatch(token):
        return None
    # The author's membership and account are read with the link (one join), so a removed,
    # demoted or disabled author's links stop on every replica at the next request.
    found = (
        await db.execute(
            select(Share, Session, User, ProjectMember.role)
            .join(Session, Session.id == Share.session_id)
            .outerjoin(User, User.id == Share.created_by)
            .outerjoin(
                ProjectMember,
                (ProjectMember.project_id == Session.project_id)
                & (ProjectMember.user_id == Share.created_by),
            )
            .where(Share.token_hash == security.hash_token(token))
        )
    ).one_or_none()
    if found is None:
        return None
    share, session, author, role = found
    if status(share, author, role) != "active":
        return None
    return share, session


# A link opened again and again is one event in the audit log per this long.
OPENED_EVENT_EVERY = timedelta(hours=1)


async def record_opened(db: AsyncSession, share: Share, session: Session) -> None:
    """The audit log notes that a link was opened (by the share's id, never its token; at
    most one event a link an hour, so a refresh storm does not flood the log)."""
    author = await db.scalar(select(User.email).where(User.id == share.created_by))
    about = {
        "share_id": str(share.id),
        "session_id": str(session.id),
        "title": session.title,
        "by": author,
    }
    await audit.record_unless_recent(
        db, session.project_id, Action.share_opened, ("share", share.id), about, OPENED_EVENT_EVERY
    )

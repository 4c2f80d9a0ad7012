"""A job's share link (issue 45, an alert's `{channel: "share"}`): one link a job that always
shows the job's latest run, read-only, without logging in.

It is a share (app.shares.service) on the job's own session with `job_id` set: opened, listed,
revoked and ended (expiry, its author losing access) as every other link. Unlike theirs, its
token is kept sealed (as source passwords are, bound to the share's id) besides its hash, so
that each alert message can carry the link. It is made when a job's alerts are saved with a
share delivery (by whoever saved them, for JOB_LINK_DAYS days); a revoked or ended one is
replaced the next time they are saved.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.audit import Action
from app.auth import security
from app.models import ProjectMember, Share, User
from app.models.base import utcnow
from app.models.jobs import Job
from app.shares.service import status
from app.sources.credentials import CannotDecrypt, Keyring, Secret

JOB_LINK_DAYS = 365


async def active(db: AsyncSession, job_id: uuid.UUID, project_id: uuid.UUID) -> Share | None:
    """The job's link that opens now (None: none, or all revoked, expired or their authors
    lost access)."""
    rows = await db.execute(
        select(Share, User, ProjectMember.role)
        .outerjoin(User, User.id == Share.created_by)
        .outerjoin(
            ProjectMember,
            (ProjectMember.project_id == project_id) & (ProjectMember.user_id == Share.created_by),
        )
        .where(Share.job_id == job_id, Share.revoked_at.is_(None))
        .order_by(Share.created_at.desc())
    )
    for share, author, role in rows.all():
        if status(share, author, role) == "active":
            return share
    return None


async def ensure(db: AsyncSession, job: Job, by: User, keyring: Keyring) -> Share:
    """The job's link that opens now, made (by `by`) when it has none."""
    found = await active(db, job.id, job.project_id)
    if found is not None:
        return found
    assert job.session_id is not None  # a job always has its own session
    token = security.new_share_token()
    share = Share(
        id=uuid.uuid4(),
        session_id=job.session_id,
        job_id=job.id,
        token_hash=security.hash_token(token),
        runs=[],
        created_by=by.id,
        expires_at=utcnow() + timedelta(days=JOB_LINK_DAYS),
    )
    share.token_sealed = keyring.seal(Secret(token), str(share.id))
    db.add(share)
    await db.flush()
    about = {
        "share_id": str(share.id),
        "job_id": str(job.id),
        "job": job.name,
        "session_id": str(job.session_id),
        "title": job.name,
        "runs": [],
        "expires_at": share.expires_at.isoformat(),
    }
    await audit.record(db, job.project_id, by, Action.share_created, ("share", share.id), about)
    return share


def url_of(share: Share, keyring: Keyring, public_url: str) -> str | None:
    """The link (None: its token cannot be opened, e.g. SECRET_KEY changed without keeping
    the old one in SOURCES_PREVIOUS_SECRET_KEYS)."""
    if not share.token_sealed:
        return None
    try:
        token = keyring.open(share.token_sealed, str(share.id)).reveal()
    except CannotDecrypt:
        return None
    return f"{public_url}/api/v1/shared/{token}"


async def current_url(
    db: AsyncSession, job_id: uuid.UUID, project_id: uuid.UUID, keyring: Keyring, public_url: str
) -> str | None:
    """The job's link as an alert message carries it (None: it has none that opens)."""
    share = await active(db, job_id, project_id)
    return url_of(share, keyring, public_url) if share is not None else None

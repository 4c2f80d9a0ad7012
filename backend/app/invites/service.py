"""Invites (issue 42): an administrator invites anyone, to any project or none; a project's
owner invites to their project. The link's token is 256 random bits, shown once; only its
SHA-256 is stored. It works once, until it expires or is revoked; accepting it makes the
account with the password the person chose and adds the membership. An email that already
has an account gets 409 (they sign in, and an owner adds them as a member).

Invites to a project are in its audit log; every invite action is also logged (logger
`app.invites`) without the token, since invites without a project have no project's log.
"""

from __future__ import annotations

import logging
import re
import uuid
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.audit import Action
from app.auth import security
from app.errors import Conflict, Forbidden, NotFound, Unprocessable
from app.invites.schemas import InviteCreate, InviteStatus
from app.models import Invite, Project, ProjectMember, User
from app.models.base import utcnow
from app.ownership import Role, role_in

log = logging.getLogger(__name__)

# What an invite's token looks like (security.new_share_token); anything else is not looked up.
TOKEN = re.compile(r"[A-Za-z0-9_-]{32,64}")

GONE = (
    "This invite does not work: it was used already, revoked or has expired. Ask whoever "
    "invited you for a new one."
)
TAKEN = (
    "An account with this email exists already: sign in with it (or reset your password "
    "with an administrator), and ask the project's owner to add you."
)


class EmailTaken(Conflict):
    code = "email_taken"


def status(invite: Invite) -> InviteStatus:
    if invite.accepted_at is not None:
        return "accepted"
    if invite.revoked_at is not None:
        return "revoked"
    if invite.expires_at <= utcnow():
        return "expired"
    return "pending"


async def _may_invite(db: AsyncSession, user: User, project_id: uuid.UUID | None) -> None:
    """An administrator invites to any project or none; an owner to their project (404 for
    a project they are not in, 403 forbidden_role for a lesser role)."""
    if user.is_admin:
        if project_id is not None and await db.get(Project, project_id) is None:
            raise NotFound("No such project.", code="project_not_found")
        return
    if project_id is None:
        raise Forbidden(
            "Only an administrator can invite someone without a project; choose one of your "
            "projects.",
            code="admin_only",
        )
    role = await role_in(db, user, project_id)
    if role is None:
        raise NotFound("No such project.", code="project_not_found")
    if role < Role.owner:
        raise Forbidden("Only the project's owners can invite people to it.", code="forbidden_role")


async def create(
    db: AsyncSession, data: InviteCreate, by: User, *, default_days: int, max_days: int
) -> tuple[Invite, str]:
    """A new invite; returns it and its token (never stored)."""
    await _may_invite(db, by, data.project_id)
    if data.role is not None and data.project_id is None:
        raise Unprocessable("A role needs a project (project_id).", code="role_without_project")
    days = data.expires_in_days or default_days
    if days > max_days:
        raise Unprocessable(
            f"An invite works {max_days} days at most (INVITE_MAX_DAYS).", code="too_long"
        )
    if await db.scalar(select(User.id).where(User.email == data.email)) is not None:
        raise EmailTaken(
            f"{data.email} has an account already: add them as a member of the project instead.",
        )
    token = security.new_share_token()
    invite = Invite(
        email=data.email,
        project_id=data.project_id,
        role=(data.role or Role.editor.name) if data.project_id else None,
        token_hash=security.hash_token(token),
        created_by=by.id,
        expires_at=utcnow() + timedelta(days=days),
        email_status="not_sent",
    )
    db.add(invite)
    await db.flush()
    await _record(db, invite, by, Action.invite_created)
    return invite, token


async def _record(db: AsyncSession, invite: Invite, by: User | None, action: Action) -> None:
    about = {
        "invite_id": str(invite.id),
        "email": invite.email,
        "role": invite.role,
        "expires_at": invite.expires_at.isoformat(),
    }
    log.info(
        "%s %s by %s (project %s)",
        action.value,
        invite.email,
        by.email if by else invite.email,
        invite.project_id,
    )
    if invite.project_id is not None:
        await audit.record(db, invite.project_id, by, action, ("invite", invite.id), about)


async def get_managed(db: AsyncSession, user: User, invite_id: uuid.UUID) -> Invite:
    """An invite the user may see and revoke: any for an administrator, those of their own
    projects for an owner (404 otherwise, as for an unknown id)."""
    invite = await db.get(Invite, invite_id)
    missing = NotFound("No such invite.", code="invite_not_found")
    if invite is None:
        raise missing
    if user.is_admin:
        return invite
    if invite.project_id is None or (await role_in(db, user, invite.project_id)) != Role.owner:
        raise missing
    return invite


async def list_managed(
    db: AsyncSession, user: User, project_id: uuid.UUID | None, limit: int, offset: int
) -> tuple[list[tuple[Invite, str | None, User | None]], int]:
    """The invites the user manages (all for an administrator, their projects' for an
    owner), newest first, with each one's project name and maker."""
    query = (
        select(Invite, Project.name, User)
        .outerjoin(Project, Project.id == Invite.project_id)
        .outerjoin(User, User.id == Invite.created_by)
    )
    if not user.is_admin:
        owned = select(ProjectMember.project_id).where(
            ProjectMember.user_id == user.id, ProjectMember.role == Role.owner.name
        )
        query = query.where(Invite.project_id.in_(owned))
    if project_id is not None:
        query = query.where(Invite.project_id == project_id)
    total = await db.scalar(select(func.count()).select_from(query.subquery()))
    rows = await db.execute(
        query.order_by(Invite.created_at.desc(), Invite.id.desc()).limit(limit).offset(offset)
    )
    return [(i, name, maker) for i, name, maker in rows.all()], int(total or 0)


async def revoke(db: AsyncSession, invite: Invite, by: User) -> None:
    """End the invite now (revoking an ended one changes nothing)."""
    if invite.revoked_at is not None or invite.accepted_at is not None:
        return
    invite.revoked_at = utcnow()
    await _record(db, invite, by, Action.invite_revoked)
    await db.flush()


async def opened(db: AsyncSession, token: str) -> Invite | None:
    """The pending invite a token opens (locked for this transaction), or None."""
    if not TOKEN.fullmatch(token):
        return None
    invite = (
        await db.scalars(
            select(Invite).where(Invite.token_hash == security.hash_token(token)).with_for_update()
        )
    ).one_or_none()
    if invite is None or status(invite) != "pending":
        return None
    return invite


async def accept(db: AsyncSession, invite: Invite, password: str) -> User:
    """Make the invited person's account with their password, and their membership. The
    invite is used up in the same transaction, so two tabs cannot both accept it."""
    if await db.scalar(select(User.id).where(User.email == invite.email)) is not None:
        raise EmailTaken(TAKEN)
    user = User(email=invite.email, password_hash=await security.hash_password(password))
    db.add(user)
    try:
        async with db.begin_nested():
            await db.flush()
    except IntegrityError:
        raise EmailTaken(TAKEN) from None
    invite.accepted_at = utcnow()
    if invite.project_id is not None and invite.role is not None:
        db.add(ProjectMember(project_id=invite.project_id, user_id=user.id, role=invite.role))
    await db.flush()
    await _record(db, invite, user, Action.invite_accepted)
    return user

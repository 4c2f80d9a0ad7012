"""Making a comment's notifications, listing a user's, marking them read (the request's
transaction; the caller commits)."""

from __future__ import annotations

import uuid

from sqlalchemy import Select, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import paginate
from app.models import Comment, Notification, ProjectMember, Run, User
from app.models.base import utcnow

# What a notification keeps of a comment.
TEXT_CHARS = 200
TOLD = ("owner", "editor")


async def comment_added(
    db: AsyncSession, project_id: uuid.UUID, run: Run, comment: Comment, author: User
) -> list[Notification]:
    """Tell the project's owners and editors, but the author, of `comment`: their
    notifications (flushed: ids and times set)."""
    told = list(
        await db.scalars(
            select(ProjectMember.user_id).where(
                ProjectMember.project_id == project_id,
                ProjectMember.role.in_(TOLD),
                ProjectMember.user_id != author.id,
            )
        )
    )
    made = [
        Notification(
            user_id=user_id,
            kind="comment",
            project_id=project_id,
            session_id=run.session_id,
            run_id=run.id,
            comment_id=comment.id,
            actor_email=author.email,
            text=comment.body[:TEXT_CHARS],
        )
        for user_id in told
    ]
    db.add_all(made)
    await db.flush()
    return made


def _visible(user: User) -> Select[Notification]:
    """The user's notifications of projects they are still a member of."""
    return (
        select(Notification)
        .join(
            ProjectMember,
            (ProjectMember.project_id == Notification.project_id)
            & (ProjectMember.user_id == user.id),
        )
        .where(Notification.user_id == user.id)
    )


async def unread_count(db: AsyncSession, user: User) -> int:
    query = _visible(user).where(Notification.read_at.is_(None))
    return await db.scalar(select(func.count()).select_from(query.subquery())) or 0


async def page(
    db: AsyncSession, user: User, unread_only: bool, limit: int, offset: int
) -> tuple[list[Notification], int]:
    """A page of the user's notifications, newest first."""
    query = _visible(user)
    if unread_only:
        query = query.where(Notification.read_at.is_(None))
    query = query.order_by(Notification.created_at.desc(), Notification.id.desc())
    return await paginate(db, query, limit, offset)


async def mark_read(db: AsyncSession, user: User, ids: list[uuid.UUID] | None) -> int:
    """Mark the user's unread notifications read (only `ids`, when given; ids of others'
    notifications are passed over); how many were marked."""
    statement = update(Notification).where(
        Notification.user_id == user.id, Notification.read_at.is_(None)
    )
    if ids is not None:
        statement = statement.where(Notification.id.in_(ids))
    result = await db.execute(statement.values(read_at=utcnow()))
    return int(result.rowcount)  # type: ignore[attr-defined]

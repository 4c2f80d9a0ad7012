"""Writing, listing and deleting comments (the request's transaction; the caller commits)."""

from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.audit import Action
from app.comments.schemas import CommentCreate, CommentOut
from app.errors import BadRequest, NotFound
from app.models import Comment, ProjectMember, Run, Session, User
from app.ownership import Role, require
from app.schemas import PersonOut

# What an audit event and a notification keep of a comment.
EXCERPT_CHARS = 200


class CommentNotFound(NotFound):
    code = "comment_not_found"


def out(comment: Comment, author: User | None) -> CommentOut:
    person = PersonOut(user_id=author.id, email=author.email) if author is not None else None
    return CommentOut(
        id=comment.id,
        run_id=comment.run_id,
        author=person,
        body=comment.body,
        reply_to=comment.reply_to,
        created_at=comment.created_at,
    )


async def project_of(db: AsyncSession, run: Run) -> uuid.UUID:
    project_id = await db.scalar(select(Session.project_id).where(Session.id == run.session_id))
    assert project_id is not None
    return project_id


async def create(db: AsyncSession, run: Run, author: User, data: CommentCreate) -> Comment:
    """A comment by `author` on `run`'s answer, audited.

    Raises:
        BadRequest: reply_to_not_in_run, when `reply_to` is no comment of this run.
    """
    if data.reply_to is not None:
        parent = await db.scalar(
            select(Comment.id).where(Comment.id == data.reply_to, Comment.run_id == run.id)
        )
        if parent is None:
            raise BadRequest(
                "reply_to must be a comment on the same answer.", code="reply_to_not_in_run"
            )
    comment = Comment(run_id=run.id, author_id=author.id, body=data.body, reply_to=data.reply_to)
    db.add(comment)
    await db.flush()
    about = {
        "run_id": str(run.id),
        "session_id": str(run.session_id),
        "body": data.body[:EXCERPT_CHARS],
        "reply": data.reply_to is not None,
    }
    project_id = await project_of(db, run)
    await audit.record(db, project_id, author, Action.comment_added, ("comment", comment.id), about)
    return comment


async def page(db: AsyncSession, run: Run, limit: int, offset: int) -> tuple[list[CommentOut], int]:
    """The run's comments, oldest first (replies among them; `reply_to` says where)."""
    query = (
        select(Comment, User)
        .outerjoin(User, User.id == Comment.author_id)
        .where(Comment.run_id == run.id)
        .order_by(Comment.created_at, Comment.id)
    )
    total = await db.scalar(select(func.count()).where(Comment.run_id == run.id)) or 0
    rows = (await db.execute(query.limit(limit).offset(offset))).all()
    return [out(comment, author) for comment, author in rows], total


async def get_deletable(db: AsyncSession, user: User, comment_id: uuid.UUID) -> tuple[Comment, Run]:
    """The comment, if `user` may delete it: its author (any member), or an owner.

    Raises:
        CommentNotFound: no such comment, or none of a project of the user's (404).
        ForbiddenRole: a member who is neither its author nor an owner (403).
    """
    found = (
        await db.execute(
            select(Comment, ProjectMember.role)
            .join(Run, Run.id == Comment.run_id)
            .join(Session, Session.id == Run.session_id)
            .join(
                ProjectMember,
                (ProjectMember.project_id == Session.project_id)
                & (ProjectMember.user_id == user.id),
            )
            .where(Comment.id == comment_id)
        )
    ).one_or_none()
    if found is None:
        raise CommentNotFound("No such comment.", code="comment_not_found")
    comment, role = found
    if comment.author_id != user.id:
        require(Role.of(role), Role.owner)
    run = await db.get(Run, comment.run_id)
    assert run is not None
    return comment, run


async def delete_comment(db: AsyncSession, comment: Comment, run: Run, user: User) -> None:
    """Delete the comment and every reply under it, audited."""
    doomed = [comment.id]
    frontier = [comment.id]
    while frontier:
        frontier = list(await db.scalars(select(Comment.id).where(Comment.reply_to.in_(frontier))))
        doomed += frontier
    about = {
        "run_id": str(run.id),
        "session_id": str(run.session_id),
        "body": comment.body[:EXCERPT_CHARS],
        "replies": len(doomed) - 1,
    }
    project_id = await project_of(db, run)
    await audit.record(db, project_id, user, Action.comment_deleted, ("comment", comment.id), about)
    await db.execute(delete(Comment).where(Comment.id.in_(doomed)))

"""Analysis sessions; a session belongs to whoever owns its project."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import NotFound
from app.models import Project, Session, User
from app.sessions.schemas import SessionCreate, SessionUpdate

DEFAULT_TITLE = "New session"


async def get_owned(db: AsyncSession, user: User, session_id: uuid.UUID) -> Session:
    session = (
        await db.scalars(
            select(Session)
            .join(Project, Project.id == Session.project_id)
            .where(Session.id == session_id, Project.owner_id == user.id)
        )
    ).one_or_none()
    if session is None:
        raise NotFound("No such session.", code="session_not_found")
    return session


async def create(db: AsyncSession, project: Project, data: SessionCreate) -> Session:
    title = (data.title or "").strip() or DEFAULT_TITLE
    session = Session(project_id=project.id, title=title)
    db.add(session)
    await db.flush()
    return session


async def list_for_project(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[Session], int]:
    where = Session.project_id == project.id
    total = await db.scalar(select(func.count()).select_from(Session).where(where))
    rows = await db.scalars(
        select(Session)
        .where(where)
        .order_by(Session.updated_at.desc(), Session.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), total or 0


async def update(db: AsyncSession, session: Session, data: SessionUpdate) -> Session:
    session.title = data.title.strip()
    await db.flush()
    await db.refresh(session)
    return session


async def delete(db: AsyncSession, session: Session) -> None:
    await db.delete(session)
    await db.flush()

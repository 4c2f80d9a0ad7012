"""Analysis sessions; a session belongs to whoever owns its project."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import paginate
from app.errors import NotFound
from app.models import Project, Session, User
from app.models.jobs import Job
from app.ownership import Role, one_visible
from app.runs.repository import history as runs_history
from app.sessions.schemas import SessionCreate, SessionUpdate

DEFAULT_TITLE = "New session"


async def get_owned(
    db: AsyncSession, user: User, session_id: uuid.UUID, need: Role = Role.viewer
) -> Session:
    query = (
        select(Session)
        .join(Project, Project.id == Session.project_id)
        .where(Session.id == session_id)
    )
    missing = NotFound("No such session.", code="session_not_found")
    session: Session = await one_visible(db, user, query, missing, need)
    return session


async def create(db: AsyncSession, project: Project, data: SessionCreate) -> Session:
    title = (data.title or "").strip() or DEFAULT_TITLE
    session = Session(project_id=project.id, title=title, autonomy=data.autonomy)
    db.add(session)
    await db.flush()
    return session


async def list_for_project(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[Session], int]:
    """The project's sessions, newest first; not the jobs' own sessions (where their code
    runs: they are seen on the Jobs page, as the job's history)."""
    of_a_job = select(Job.id).where(Job.session_id == Session.id).exists()
    query = (
        select(Session)
        .where(Session.project_id == project.id, ~of_a_job)
        .order_by(Session.updated_at.desc(), Session.id)
    )
    return await paginate(db, query, limit, offset)


async def update(db: AsyncSession, session: Session, data: SessionUpdate) -> Session:
    if data.title is not None:
        session.title = data.title.strip()
    if data.autonomy is not None:
        session.autonomy = data.autonomy
    await db.flush()
    await db.refresh(session)
    return session


async def delete(db: AsyncSession, session: Session) -> list[str]:
    """Delete the session with its runs and artifacts.

    Returns:
        The storage keys of its artifacts, to delete once the transaction has committed.
    """
    keys = await runs_history.artifact_keys(db, session_id=session.id)
    await db.delete(session)
    await db.flush()
    return keys

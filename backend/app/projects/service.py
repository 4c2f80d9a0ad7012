"""Projects: every query is scoped to the owner, so another user's project is simply absent."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import paginate
from app.errors import NotFound
from app.files import service as files_service
from app.models import File, Project, Session, User
from app.projects.schemas import ProjectCreate, ProjectUpdate
from app.runs.repository import history as runs_history


async def get_owned(db: AsyncSession, user: User, project_id: uuid.UUID) -> Project:
    project = await db.get(Project, project_id)
    if project is None or project.owner_id != user.id:
        raise NotFound("No such project.", code="project_not_found")
    return project


async def create(db: AsyncSession, user: User, data: ProjectCreate) -> Project:
    project = Project(owner_id=user.id, name=data.name.strip(), description=data.description)
    db.add(project)
    await db.flush()
    return project


async def list_owned(
    db: AsyncSession, user: User, limit: int, offset: int
) -> tuple[list[Project], int]:
    query = (
        select(Project)
        .where(Project.owner_id == user.id)
        .order_by(Project.updated_at.desc(), Project.id)
    )
    return await paginate(db, query, limit, offset)


async def update(db: AsyncSession, project: Project, data: ProjectUpdate) -> Project:
    if data.name is not None:
        project.name = data.name.strip()
    if data.description is not None:
        project.description = data.description
    # Budgets: a field that is sent (null included) is set; one left out is kept.
    if "budget_usd" in data.model_fields_set:
        project.budget_usd = data.budget_usd
    if "budget_tokens" in data.model_fields_set:
        project.budget_tokens = data.budget_tokens
    await db.flush()
    await db.refresh(project)
    return project


async def session_ids(db: AsyncSession, project: Project) -> list[uuid.UUID]:
    return list(await db.scalars(select(Session.id).where(Session.project_id == project.id)))


async def delete(db: AsyncSession, project: Project, cache_dir: Path | None = None) -> list[str]:
    """Delete the project; its files and sessions cascade (the previews' copies of its
    files in `cache_dir` go once the transaction commits).

    Returns:
        The storage keys of its files, to delete once the transaction has committed.
    """
    query = select(File.storage_key, File.sha256).where(File.project_id == project.id)
    files = (await db.execute(query)).all()
    versions = await files_service.version_keys(db, project_id=project.id)
    keys = sorted({*(key for key, _ in files), *versions})
    digests = {digest for _, digest in files}
    digests |= await files_service.version_digests(db, project_id=project.id)
    keys += await runs_history.artifact_keys(db, project_id=project.id)
    await db.delete(project)
    await db.flush()
    await files_service.forget_copies(db, cache_dir, digests)
    return keys

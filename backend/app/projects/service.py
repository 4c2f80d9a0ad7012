"""Projects and their members: a project is visible to its members only (another user's
project is simply absent), each with a role (app.ownership)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.audit import Action
from app.errors import Conflict, NotFound
from app.files import service as files_service
from app.jobs import cleanup as jobs_cleanup
from app.models import File, Project, ProjectMember, Session, SnapshotChunk, User
from app.ownership import Role, one_visible
from app.projects.schemas import MemberAdd, ProjectCreate, ProjectUpdate
from app.runs import snapshot_chunks
from app.runs.repository import history as runs_history


async def get_owned(
    db: AsyncSession, user: User, project_id: uuid.UUID, need: Role = Role.viewer
) -> Project:
    """The project if the user is a member with at least `need` (404 / 403 otherwise)."""
    missing = NotFound("No such project.", code="project_not_found")
    project: Project = await one_visible(
        db, user, select(Project).where(Project.id == project_id), missing, need
    )
    return project


async def create(db: AsyncSession, user: User, data: ProjectCreate) -> Project:
    """A new project; its creator is its first owner."""
    project = Project(owner_id=user.id, name=data.name.strip(), description=data.description)
    db.add(project)
    await db.flush()
    db.add(ProjectMember(project_id=project.id, user_id=user.id, role=Role.owner.name))
    await db.flush()
    await audit.record(
        db,
        project.id,
        user,
        Action.project_created,
        ("project", project.id),
        {"name": project.name},
    )
    return project


async def list_visible(
    db: AsyncSession, user: User, limit: int, offset: int
) -> tuple[list[tuple[Project, Role]], int]:
    """The projects the user is a member of, with their role in each, latest first."""
    query = (
        select(Project, ProjectMember.role)
        .join(ProjectMember, ProjectMember.project_id == Project.id)
        .where(ProjectMember.user_id == user.id)
        .order_by(Project.updated_at.desc(), Project.id)
    )
    total = await db.scalar(select(func.count()).select_from(query.subquery()))
    rows = (await db.execute(query.limit(limit).offset(offset))).all()
    return [(project, Role.of(role)) for project, role in rows], int(total or 0)


async def members(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[tuple[ProjectMember, User]], int]:
    """A page of the project's members with their users, owners first, then by email; and
    how many members it has in all."""
    rank = case({role.name: -role.value for role in Role}, value=ProjectMember.role)
    query = (
        select(ProjectMember, User)
        .join(User, User.id == ProjectMember.user_id)
        .where(ProjectMember.project_id == project.id)
    )
    total = await db.scalar(select(func.count()).select_from(query.subquery()))
    rows = await db.execute(query.order_by(rank, User.email).limit(limit).offset(offset))
    return [(member, user) for member, user in rows.all()], int(total or 0)


async def add_member(
    db: AsyncSession, project: Project, data: MemberAdd, by: User
) -> tuple[ProjectMember, User]:
    """Make the user with that email a member (409 when they already are one), as `by`."""
    user = (await db.scalars(select(User).where(User.email == data.email))).one_or_none()
    if user is None:
        raise NotFound(
            f"No user has the email {data.email}: an administrator creates their account first.",
            code="user_not_found",
        )
    if await db.get(ProjectMember, (project.id, user.id)) is not None:
        raise Conflict(f"{user.email} is already a member of this project.", code="already_member")
    member = ProjectMember(project_id=project.id, user_id=user.id, role=data.role)
    db.add(member)
    await db.flush()
    about = {"user_id": str(user.id), "email": user.email, "role": data.role}
    await audit.record(db, project.id, by, Action.member_added, ("member", user.id), about)
    return member, user


async def get_member(db: AsyncSession, project: Project, user_id: uuid.UUID) -> ProjectMember:
    member = await db.get(ProjectMember, (project.id, user_id))
    if member is None:
        raise NotFound("No such member of this project.", code="member_not_found")
    return member


async def set_role(db: AsyncSession, member: ProjectMember, role: Role, by: User) -> User:
    """Change a member's role, as `by`; the last owner stays one (409 last_owner).

    Returns:
        The member's user.
    """
    was = member.role
    if Role.of(was) == Role.owner and role != Role.owner:
        await _refuse_last_owner(db, member)
    member.role = role.name
    await db.flush()
    user = await db.get(User, member.user_id)
    assert user is not None  # a member's user is theirs until both go (cascade)
    if was != member.role:
        about = {"user_id": str(user.id), "email": user.email, "role": member.role, "was": was}
        await audit.record(
            db, member.project_id, by, Action.member_changed, ("member", user.id), about
        )
    return user


async def remove_member(db: AsyncSession, member: ProjectMember, by: User) -> None:
    """Remove a member (or let one leave: `by` is the member); the last owner cannot (409
    last_owner)."""
    if Role.of(member.role) == Role.owner:
        await _refuse_last_owner(db, member)
    user = await db.get(User, member.user_id)
    await db.delete(member)
    await db.flush()
    about = {
        "user_id": str(member.user_id),
        "email": user.email if user else None,
        "role": member.role,
        "left": member.user_id == by.id,
    }
    await audit.record(
        db, member.project_id, by, Action.member_removed, ("member", member.user_id), about
    )


async def _refuse_last_owner(db: AsyncSession, member: ProjectMember) -> None:
    owners = await db.scalar(
        select(func.count()).where(
            ProjectMember.project_id == member.project_id, ProjectMember.role == Role.owner.name
        )
    )
    if (owners or 0) <= 1:
        raise Conflict(
            "This is the project's last owner: make another member an owner first (or delete "
            "the project).",
            code="last_owner",
        )


async def update(db: AsyncSession, project: Project, data: ProjectUpdate, by: User) -> Project:
    """Rename, describe or budget the project, as `by` (the log tells what changed)."""
    changed: dict[str, Any] = {}
    budgets: dict[str, Any] = {}
    if data.name is not None and data.name.strip() != project.name:
        changed["name"] = [project.name, data.name.strip()]
        project.name = data.name.strip()
    if data.description is not None and data.description != project.description:
        changed["description"] = True
        project.description = data.description
    if data.default_attempts is not None and data.default_attempts != project.default_attempts:
        changed["default_attempts"] = [project.default_attempts, data.default_attempts]
        project.default_attempts = data.default_attempts
    # Budgets: a field that is sent (null included) is set; one left out is kept.
    for field in ("budget_usd", "budget_tokens"):
        if field in data.model_fields_set and getattr(data, field) != getattr(project, field):
            budgets[field] = [getattr(project, field), getattr(data, field)]
            setattr(project, field, getattr(data, field))
    await db.flush()
    await db.refresh(project)
    subject = ("project", project.id)
    if changed:
        await audit.record(db, project.id, by, Action.project_updated, subject, changed)
    if budgets:
        await audit.record(db, project.id, by, Action.project_budget_changed, subject, budgets)
    return project


async def session_ids(db: AsyncSession, project: Project) -> list[uuid.UUID]:
    return list(await db.scalars(select(Session.id).where(Session.project_id == project.id)))


async def delete(
    db: AsyncSession, project: Project, by: User, cache_dir: Path | None = None
) -> list[str]:
    """Delete the project, as `by`; its files and sessions cascade (the previews' copies of
    its files in `cache_dir` go once the transaction commits). Its audit log stays, ending
    with project.deleted.

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
    chunks = select(SnapshotChunk.sha256).where(SnapshotChunk.project_id == project.id)
    keys += [snapshot_chunks.key(project.id, digest) for digest in await db.scalars(chunks)]
    await jobs_cleanup.forget_project_jobs(db, project.id)
    await db.delete(project)
    await db.flush()
    await audit.record(
        db, project.id, by, Action.project_deleted, ("project", project.id), {"name": project.name}
    )
    await files_service.forget_copies(db, cache_dir, digests)
    return keys

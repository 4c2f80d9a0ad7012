from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app import audit, audit_chain
from app.api.deps import (
    CurrentUser,
    DbDep,
    LocksDep,
    MemberProject,
    OwnedProject,
    OwnerProject,
    PageDep,
    SandboxesDep,
    SettingsDep,
    StorageDep,
    owner_project,
    refuse_busy,
    require_role,
)
from app.api.runs import OrchestratorDep
from app.api.sessions import discard_workspaces, forget
from app.audit import AuditEventOut, AuditVerification
from app.db import after_commit
from app.models import Project, ProjectMember, User
from app.ownership import Role, role_in
from app.projects import service
from app.projects.schemas import (
    MemberAdd,
    MemberOut,
    MemberUpdate,
    ProjectCreate,
    ProjectOut,
    ProjectUpdate,
)
from app.runs.budget import Usage
from app.runs.repository import usage
from app.schemas import Page

router = APIRouter(tags=["projects"])


@router.post("/projects", response_model=ProjectOut, status_code=status.HTTP_201_CREATED)
async def create_project(body: ProjectCreate, db: DbDep, user: CurrentUser) -> ProjectOut:
    return ProjectOut.of(await service.create(db, user, body), None, Role.owner)


@router.get("/projects", response_model=Page[ProjectOut])
async def list_projects(db: DbDep, user: CurrentUser, page: PageDep) -> Page[ProjectOut]:
    """The projects the caller is a member of, with their role in each."""
    items, total = await service.list_visible(db, user, page.limit, page.offset)
    spent = await usage.by_project(db, [p.id for p, _ in items])
    return Page(items=[ProjectOut.of(p, spent.get(p.id), role) for p, role in items], total=total)


@router.get("/projects/{project_id}", response_model=ProjectOut)
async def get_project(project: OwnedProject, db: DbDep, user: CurrentUser) -> ProjectOut:
    return await _out(db, user, project)


@router.patch("/projects/{project_id}", response_model=ProjectOut)
async def update_project(
    body: ProjectUpdate, project: OwnedProject, db: DbDep, user: CurrentUser
) -> ProjectOut:
    """Rename or describe the project (editors); its budgets are the owners'."""
    if {"budget_usd", "budget_tokens"} & body.model_fields_set:
        await require_role(db, user, project.id, Role.owner)
    project = await service.update(db, project, body, user)
    return await _out(db, user, project)


async def _out(db: DbDep, user: CurrentUser, project: Project) -> ProjectOut:
    role = await role_in(db, user, project.id) or Role.viewer
    return ProjectOut.of(project, await usage.of_project(db, project.id), role)


@router.get("/projects/{project_id}/members", response_model=Page[MemberOut])
async def list_members(project: OwnedProject, db: DbDep, page: PageDep) -> Page[MemberOut]:
    """Who the project's members are, with their roles, owners first (any member may see
    them): a page of them, and how many there are."""
    spent = await usage.by_asker(db, project.id)
    rows, total = await service.members(db, project, page.limit, page.offset)
    return Page(items=[_member(m, u, spent) for m, u in rows], total=total)


@router.post(
    "/projects/{project_id}/members", response_model=MemberOut, status_code=status.HTTP_201_CREATED
)
async def add_member(
    body: MemberAdd, project: OwnerProject, db: DbDep, user: CurrentUser
) -> MemberOut:
    """Add a user (by the email they log in with) with a role. Owners only."""
    member, added = await service.add_member(db, project, body, user)
    return _member(member, added, await usage.by_asker(db, project.id))


@router.patch("/projects/{project_id}/members/{user_id}", response_model=MemberOut)
async def update_member(
    user_id: uuid.UUID, body: MemberUpdate, project: OwnerProject, db: DbDep, user: CurrentUser
) -> MemberOut:
    """Change a member's role. Owners only; the last owner stays one (409 last_owner)."""
    member = await service.get_member(db, project, user_id)
    changed = await service.set_role(db, member, Role.of(body.role), user)
    return _member(member, changed, await usage.by_asker(db, project.id))


@router.delete("/projects/{project_id}/members/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_member(
    user_id: uuid.UUID, project: MemberProject, db: DbDep, user: CurrentUser
) -> Response:
    """Remove a member (owners), or leave the project (any member, their own id); the last
    owner cannot leave (409 last_owner)."""
    if user_id != user.id:
        await require_role(db, user, project.id, Role.owner)
    await service.remove_member(db, await service.get_member(db, project, user_id), user)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _member(
    member: ProjectMember, user: User, spent: dict[uuid.UUID, tuple[Usage, int]]
) -> MemberOut:
    totals, runs = spent.get(user.id, (Usage(), 0))
    fields = {"user_id": user.id, "email": user.email, "role": member.role, "runs": runs}
    return MemberOut.model_validate({**fields, **vars(totals), "added_at": member.added_at})


@router.delete("/projects/{project_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_project(
    project: OwnerProject,
    db: DbDep,
    storage: StorageDep,
    locks: LocksDep,
    sandboxes: SandboxesDep,
    runs: OrchestratorDep,
    settings: SettingsDep,
    user: CurrentUser,
) -> Response:
    session_ids = await service.session_ids(db, project)
    await refuse_busy(locks, session_ids, "A session of this project")
    await runs.stop_waiting(session_ids, "Its project was deleted.")
    await discard_workspaces(sandboxes, session_ids)
    keys = await service.delete(db, project, user, settings.previews_cache)
    after_commit(db, lambda: forget(storage, keys, session_ids))
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/projects/{project_id}/audit", response_model=Page[AuditEventOut])
async def list_audit_events(
    project: OwnerProject,
    db: DbDep,
    page: PageDep,
    action: Annotated[
        str | None,
        Query(
            max_length=40,
            description="Only this action (member.added), or a family of them (member)",
        ),
    ] = None,
) -> Page[AuditEventOut]:
    """The project's audit log, newest first: who added, changed or removed members,
    uploaded, replaced or deleted files, changed sources, asked questions (with the model
    and what they cost), reviewed code, shared or exported sessions. Owners only."""
    items, total = await audit.events(db, project.id, page.limit, page.offset, action)
    return Page(items=[AuditEventOut.of(e) for e in items], total=total)


@router.get("/projects/{project_id}/audit/verify", response_model=AuditVerification)
async def verify_audit_log(
    project_id: uuid.UUID, db: DbDep, user: CurrentUser
) -> AuditVerification:
    """Walk the project's audit log, a hash chain, and say whether it is intact, or which
    event was the first changed, removed or inserted. Owners of the project; an
    administrator of any project (a deleted one too: its log outlives it)."""
    if not user.is_admin:
        await owner_project(project_id, db, user)
    return AuditVerification.of(await audit_chain.verify(db, project_id))

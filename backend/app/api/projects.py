from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api.deps import (
    CurrentUser,
    DbDep,
    LocksDep,
    OwnedProject,
    PageDep,
    SandboxesDep,
    SettingsDep,
    StorageDep,
    refuse_busy,
)
from app.api.runs import OrchestratorDep
from app.api.sessions import discard_workspaces, forget
from app.db import after_commit
from app.projects import service
from app.projects.schemas import ProjectCreate, ProjectOut, ProjectUpdate
from app.runs.repository import usage
from app.schemas import Page

router = APIRouter(tags=["projects"])


@router.post("/projects", response_model=ProjectOut, status_code=status.HTTP_201_CREATED)
async def create_project(body: ProjectCreate, db: DbDep, user: CurrentUser) -> ProjectOut:
    return ProjectOut.of(await service.create(db, user, body), None)


@router.get("/projects", response_model=Page[ProjectOut])
async def list_projects(db: DbDep, user: CurrentUser, page: PageDep) -> Page[ProjectOut]:
    items, total = await service.list_owned(db, user, page.limit, page.offset)
    spent = await usage.by_project(db, [p.id for p in items])
    return Page(items=[ProjectOut.of(p, spent.get(p.id)) for p in items], total=total)


@router.get("/projects/{project_id}", response_model=ProjectOut)
async def get_project(project: OwnedProject, db: DbDep) -> ProjectOut:
    return ProjectOut.of(project, await usage.of_project(db, project.id))


@router.patch("/projects/{project_id}", response_model=ProjectOut)
async def update_project(body: ProjectUpdate, project: OwnedProject, db: DbDep) -> ProjectOut:
    project = await service.update(db, project, body)
    return ProjectOut.of(project, await usage.of_project(db, project.id))


@router.delete("/projects/{project_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_project(
    project: OwnedProject,
    db: DbDep,
    storage: StorageDep,
    locks: LocksDep,
    sandboxes: SandboxesDep,
    runs: OrchestratorDep,
    settings: SettingsDep,
) -> Response:
    session_ids = await service.session_ids(db, project)
    await refuse_busy(locks, session_ids, "A session of this project")
    await runs.stop_waiting(session_ids, "Its project was deleted.")
    await discard_workspaces(sandboxes, session_ids)
    keys = await service.delete(db, project, settings.previews_cache)
    after_commit(db, lambda: forget(storage, keys, session_ids))
    return Response(status_code=status.HTTP_204_NO_CONTENT)

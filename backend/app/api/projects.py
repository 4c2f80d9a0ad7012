from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from app.api.deps import CurrentUser, DbDep, OwnedProject, PageDep, SettingsDep, StorageDep
from app.db import after_commit
from app.errors import Conflict
from app.infra.storage import delete_objects
from app.projects import service
from app.projects.schemas import ProjectCreate, ProjectOut, ProjectUpdate
from app.runs.workspace import workspace_dir
from app.schemas import Page

router = APIRouter(tags=["projects"])


@router.post("/projects", response_model=ProjectOut, status_code=status.HTTP_201_CREATED)
async def create_project(body: ProjectCreate, db: DbDep, user: CurrentUser) -> ProjectOut:
    return ProjectOut.model_validate(await service.create(db, user, body))


@router.get("/projects", response_model=Page[ProjectOut])
async def list_projects(db: DbDep, user: CurrentUser, page: PageDep) -> Page[ProjectOut]:
    items, total = await service.list_owned(db, user, page.limit, page.offset)
    return Page(items=[ProjectOut.model_validate(p) for p in items], total=total)


@router.get("/projects/{project_id}", response_model=ProjectOut)
async def get_project(project: OwnedProject) -> ProjectOut:
    return ProjectOut.model_validate(project)


@router.patch("/projects/{project_id}", response_model=ProjectOut)
async def update_project(body: ProjectUpdate, project: OwnedProject, db: DbDep) -> ProjectOut:
    return ProjectOut.model_validate(await service.update(db, project, body))


@router.delete("/projects/{project_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_project(
    project: OwnedProject, db: DbDep, storage: StorageDep, settings: SettingsDep, request: Request
) -> Response:
    session_ids = await service.session_ids(db, project)
    for session_id in session_ids:
        if await request.app.state.locks.holder(str(session_id)) is not None:
            raise Conflict(
                "A session of this project is answering a question; stop it before deleting.",
                code="session_busy",
            )
    keys = await service.delete(db, project)
    sandboxes = request.app.state.sandboxes

    async def clean_up() -> None:
        await delete_objects(storage, keys)
        for session_id in session_ids:
            await sandboxes.discard(session_id, workspace_dir(settings.DATA_DIR, session_id))

    after_commit(db, clean_up)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

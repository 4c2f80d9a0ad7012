from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from app.api.deps import DbDep, OwnedProject, OwnedSession, PageDep, SettingsDep, StorageDep
from app.db import after_commit
from app.errors import Conflict
from app.infra.storage import delete_objects
from app.runs.workspace import workspace_dir
from app.schemas import Page
from app.sessions import service
from app.sessions.schemas import SessionCreate, SessionOut, SessionUpdate

router = APIRouter(tags=["sessions"])


@router.post(
    "/projects/{project_id}/sessions",
    response_model=SessionOut,
    status_code=status.HTTP_201_CREATED,
)
async def create_session(body: SessionCreate, project: OwnedProject, db: DbDep) -> SessionOut:
    return SessionOut.model_validate(await service.create(db, project, body))


@router.get("/projects/{project_id}/sessions", response_model=Page[SessionOut])
async def list_sessions(project: OwnedProject, db: DbDep, page: PageDep) -> Page[SessionOut]:
    items, total = await service.list_for_project(db, project, page.limit, page.offset)
    return Page(items=[SessionOut.model_validate(s) for s in items], total=total)


@router.get("/sessions/{session_id}", response_model=SessionOut)
async def get_session(session: OwnedSession) -> SessionOut:
    return SessionOut.model_validate(session)


@router.patch("/sessions/{session_id}", response_model=SessionOut)
async def update_session(body: SessionUpdate, session: OwnedSession, db: DbDep) -> SessionOut:
    return SessionOut.model_validate(await service.update(db, session, body))


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(
    session: OwnedSession, db: DbDep, storage: StorageDep, settings: SettingsDep, request: Request
) -> Response:
    if await request.app.state.locks.holder(str(session.id)) is not None:
        raise Conflict(
            "This session is answering a question; stop it before deleting.", code="session_busy"
        )
    keys = await service.delete(db, session)
    workspace = workspace_dir(settings.DATA_DIR, session.id)
    after_commit(db, lambda: delete_objects(storage, keys))
    after_commit(db, lambda: request.app.state.sandboxes.discard(session.id, workspace))
    return Response(status_code=status.HTTP_204_NO_CONTENT)

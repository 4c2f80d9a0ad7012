from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from app.api.deps import (
    DbDep,
    LocksDep,
    OwnedProject,
    OwnedSession,
    PageDep,
    SandboxesDep,
    StorageDep,
    refuse_busy,
)
from app.api.runs import OrchestratorDep
from app.db import after_commit
from app.infra.storage import ObjectStorage, delete_objects
from app.runs import budget, snapshots
from app.runs.sandboxes import SandboxPool
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
    return SessionOut.of(await service.create(db, project, body), None)


@router.get("/projects/{project_id}/sessions", response_model=Page[SessionOut])
async def list_sessions(project: OwnedProject, db: DbDep, page: PageDep) -> Page[SessionOut]:
    items, total = await service.list_for_project(db, project, page.limit, page.offset)
    usage = await budget.by_session(db, [s.id for s in items])
    return Page(items=[SessionOut.of(s, usage.get(s.id)) for s in items], total=total)


@router.get("/sessions/{session_id}", response_model=SessionOut)
async def get_session(session: OwnedSession, db: DbDep) -> SessionOut:
    return SessionOut.of(session, await budget.of_session(db, session.id))


@router.patch("/sessions/{session_id}", response_model=SessionOut)
async def update_session(body: SessionUpdate, session: OwnedSession, db: DbDep) -> SessionOut:
    session = await service.update(db, session, body)
    return SessionOut.of(session, await budget.of_session(db, session.id))


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(
    session: OwnedSession,
    db: DbDep,
    storage: StorageDep,
    locks: LocksDep,
    sandboxes: SandboxesDep,
    runs: OrchestratorDep,
) -> Response:
    await refuse_busy(locks, [session.id], "This session")
    await runs.stop_waiting([session.id], "Its session was deleted.")
    keys = await service.delete(db, session)
    after_commit(db, lambda: forget(storage, sandboxes, keys, [session.id]))
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def forget(
    storage: ObjectStorage,
    sandboxes: SandboxPool,
    keys: list[str],
    session_ids: list[uuid.UUID],
) -> None:
    """After deleting sessions: their stored bytes, sandbox workers and workspaces go too."""
    await delete_objects(storage, keys)
    for session_id in session_ids:
        await snapshots.delete(storage, session_id)
        await sandboxes.discard(session_id)

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response, status

from app import audit
from app.api.deps import (
    CurrentUser,
    DbDep,
    LocksDep,
    OwnedProject,
    OwnedSession,
    PageDep,
    SandboxesDep,
    SettingsDep,
    StorageDep,
    refuse_busy,
)
from app.api.headers import filename_parameters
from app.api.live import LiveDep
from app.api.runs import OrchestratorDep
from app.audit import Action
from app.branches import detach, pins
from app.branches import service as branches_service
from app.db import after_commit
from app.errors import Conflict, ServerFault
from app.infra.storage import ObjectStorage, delete_objects
from app.models import Session
from app.runs import snapshots
from app.runs.repository import usage
from app.runs.sandboxes import SandboxPool
from app.schemas import Page
from app.sessions import export, service
from app.sessions.schemas import SessionCreate, SessionOut, SessionUpdate

log = logging.getLogger(__name__)
router = APIRouter(tags=["sessions"])


@router.post(
    "/projects/{project_id}/sessions",
    response_model=SessionOut,
    status_code=status.HTTP_201_CREATED,
)
async def create_session(
    body: SessionCreate, project: OwnedProject, db: DbDep, user: CurrentUser
) -> SessionOut:
    session = await service.create(db, project, body)
    about = {"session_id": str(session.id), "title": session.title}
    await audit.record(db, project.id, user, Action.session_created, ("session", session.id), about)
    return SessionOut.of(session, None)


@router.get("/projects/{project_id}/sessions", response_model=Page[SessionOut])
async def list_sessions(project: OwnedProject, db: DbDep, page: PageDep) -> Page[SessionOut]:
    items, total = await service.list_for_project(db, project, page.limit, page.offset)
    spent = await usage.by_session(db, [s.id for s in items])
    return Page(items=[SessionOut.of(s, spent.get(s.id)) for s in items], total=total)


@router.get("/sessions/{session_id}", response_model=SessionOut)
async def get_session(session: OwnedSession, db: DbDep) -> SessionOut:
    shown = SessionOut.of(session, await usage.of_session(db, session.id))
    shown.file_pins = await pins.of_session(db, session.id)
    return shown


@router.patch("/sessions/{session_id}", response_model=SessionOut)
async def update_session(
    body: SessionUpdate, session: OwnedSession, db: DbDep, user: CurrentUser, live: LiveDep
) -> SessionOut:
    title, autonomy = session.title, session.autonomy
    session = await service.update(db, session, body)
    subject = ("session", session.id)
    if session.title != title:
        about = {"session_id": str(session.id), "title": [title, session.title]}
        await audit.record(db, session.project_id, user, Action.session_renamed, subject, about)
        renamed, new_title = session.id, session.title
        after_commit(db, lambda: live.session_updated(renamed, new_title))
    if session.autonomy != autonomy:
        about = {
            "session_id": str(session.id),
            "title": session.title,
            "autonomy": [autonomy, session.autonomy],
        }
        action = Action.session_autonomy_changed
        await audit.record(db, session.project_id, user, action, subject, about)
    return SessionOut.of(session, await usage.of_session(db, session.id))


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(
    session: OwnedSession,
    db: DbDep,
    storage: StorageDep,
    locks: LocksDep,
    sandboxes: SandboxesDep,
    runs: OrchestratorDep,
    user: CurrentUser,
    branches: Annotated[
        Literal["keep", "delete"] | None,
        Query(
            description="A session with branches: keep them (they stand alone, with their "
            "past) or delete them too; without it such a session answers 409 has_branches"
        ),
    ] = None,
) -> Response:
    """Delete the session, its runs and artifacts (and, with `branches=delete`, its
    branches, theirs and so on)."""
    about: dict[str, object] = {"session_id": str(session.id), "title": session.title}
    doomed = [session.id]
    children = await branches_service.children_count(db, session.id)
    if children and branches is None:
        raise Conflict(
            f"This session has {children} branch{'' if children == 1 else 'es'}: say whether "
            "to keep them (branches=keep) or delete them too (branches=delete).",
            code="has_branches",
        )
    if children and branches == "delete":
        doomed += await detach.subtree(db, session)
        about["branches_deleted"] = len(doomed) - 1
    await refuse_busy(locks, doomed, "This session")
    await runs.stop_waiting(doomed, "Its session was deleted.")
    await discard_workspaces(sandboxes, doomed)
    if children and branches == "keep":
        about["branches_kept"] = await detach.keep_branches(db, storage, session)
    keys: list[str] = []
    for doomed_id in reversed(doomed):  # the branches first, then the session
        row = session if doomed_id == session.id else await db.get(Session, doomed_id)
        if row is not None:
            keys += await service.delete(db, row)
    await audit.record(
        db, session.project_id, user, Action.session_deleted, ("session", session.id), about
    )
    after_commit(db, lambda: forget(storage, keys, doomed))
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def discard_workspaces(sandboxes: SandboxPool, session_ids: list[uuid.UUID]) -> None:
    """Stop the sessions' workers and remove their workspaces, before the sessions go: a
    workspace that cannot be removed (the code wrote it) fails the deletion with a reason
    rather than stay behind unnoticed.

    Raises:
        ServerFault: workspace_not_removed (500); nothing was deleted, the user may try again.
    """
    for session_id in session_ids:
        try:
            await sandboxes.discard(session_id)
        except OSError as exc:
            log.exception("could not remove the workspace of session %s", session_id)
            raise ServerFault(
                "The session's files on the server could not all be removed, so nothing was "
                f"deleted ({exc.strerror or exc}). Try again; if it goes on, an administrator "
                f"can look at the workspace folder of session {session_id}.",
                code="workspace_not_removed",
            ) from exc


async def forget(storage: ObjectStorage, keys: list[str], session_ids: list[uuid.UUID]) -> None:
    """After deleting sessions: their stored bytes and snapshots go too."""
    await delete_objects(storage, keys)
    for session_id in session_ids:
        await snapshots.delete(storage, session_id)


@router.get(
    "/sessions/{session_id}/export",
    response_class=Response,
    responses={
        200: {
            "description": "The session as a file (an attachment)",
            "content": {media: {} for media in export.MEDIA_TYPES.values()},
        },
        503: {"description": "Too many exports at once (code server_busy); retry"},
    },
)
async def export_session(
    session: OwnedSession,
    db: DbDep,
    storage: StorageDep,
    settings: SettingsDep,
    user: CurrentUser,
    format: Annotated[
        export.ExportFormat,
        Query(description="ipynb: a Jupyter notebook; html: a standalone report; md: Markdown"),
    ] = "ipynb",
    runs: Annotated[
        str | None,
        Query(
            description=(
                "Only these runs, comma-separated ids (shown in the session's order). "
                "Default: every run; the html report: the runs that succeeded (every run "
                "when none did)"
            ),
            max_length=20_000,
        ),
    ] = None,
) -> Response:
    """The session's questions, code, outputs, charts, tables and answers as a notebook
    that reruns in Jupyter next to the files the session read, a standalone HTML report to
    send (the files the code wrote attached), or Markdown. A run still going is exported as
    far as it has been recorded. 400 `unknown_run` for a run id that is not the session's."""
    run_ids = _run_ids(runs)
    with export.slot():
        # PUBLIC_URL (or where the server listens), never the Host header a client sent.
        gathered = await export.gather(db, storage, session, settings.public_url, format, run_ids)
        body = await asyncio.to_thread(export.render, gathered, format)
    about = {
        "session_id": str(session.id),
        "title": session.title,
        "format": format,
        "runs": [r.id for r in gathered.runs],
    }
    await audit.record(
        db, session.project_id, user, Action.export_downloaded, ("session", session.id), about
    )
    name = export.file_name(gathered, format)
    headers = {
        "Content-Disposition": f"attachment; {filename_parameters(name)}",
        "X-Content-Type-Options": "nosniff",
    }
    return Response(body, media_type=export.MEDIA_TYPES[format], headers=headers)


def _run_ids(runs: str | None) -> list[uuid.UUID] | None:
    """`runs=<id>,<id>` as ids; a malformed id is bad input (400 unknown_run)."""
    if runs is None:
        return None
    ids = []
    for part in filter(None, (p.strip() for p in runs.split(","))):
        try:
            ids.append(uuid.UUID(part))
        except ValueError:
            raise export.UnknownRuns(f"runs: {part[:60]!r} is not a run id.") from None
    return ids

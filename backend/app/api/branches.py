"""Branches (API.md, "Branches"): make one after a run of a session's history, and read
the tree a session belongs to."""

from __future__ import annotations

from fastapi import APIRouter, status

from app import audit
from app.api.deps import CurrentUser, DbDep, OwnedSession
from app.audit import Action
from app.branches import pins, service, tree
from app.branches.schemas import BranchCreate, SessionTree
from app.runs.repository import usage
from app.sessions.schemas import SessionOut

router = APIRouter(tags=["branches"])


@router.post(
    "/sessions/{session_id}/branch",
    response_model=SessionOut,
    status_code=status.HTTP_201_CREATED,
    responses={
        404: {"description": "No such run in the session's history (run_not_in_session)"},
        409: {"description": "The run has not finished (run_not_finished)"},
    },
)
async def branch_session(
    body: BranchCreate, session: OwnedSession, db: DbDep, user: CurrentUser
) -> SessionOut:
    """A new session in the same project that continues after `after_run_id` (a run of this
    session's history, its own or inherited): its past is the history up to that run, its
    variables those that existed when the run ended. The session may be busy meanwhile."""
    branch, after = await service.create(db, session, body.after_run_id)
    about = {
        "session_id": str(branch.id),
        "title": branch.title,
        "parent_session_id": str(session.id),
        "parent_title": session.title,
        "after_run_id": str(after.id),
        "after_query": audit.query_detail(after.query),
    }
    subject = ("session", branch.id)
    await audit.record(db, session.project_id, user, Action.session_branched, subject, about)
    shown = SessionOut.of(branch, None)
    shown.file_pins = await pins.of_session(db, branch.id)
    return shown


@router.post("/sessions/{session_id}/files/unpin", response_model=SessionOut)
async def unpin_files(session: OwnedSession, db: DbDep) -> SessionOut:
    """Move a branch to the latest version of every project file: its next questions read
    today's files (its past stays as it was). Editor; a session with no pins is unchanged."""
    await pins.unpin(db, session.id)
    await db.commit()
    return SessionOut.of(session, await usage.of_session(db, session.id))


@router.get("/sessions/{session_id}/tree", response_model=SessionTree)
async def session_tree(session: OwnedSession, db: DbDep) -> SessionTree:
    """The whole tree the session belongs to, from its root (whichever session of it is
    asked): each node's session, the run it continues after and that run's question."""
    return await tree.tree_of(db, session)

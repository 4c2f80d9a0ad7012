"""Cells: the user's own Python, or SQL on a project source, run in the session's sandbox
as a run of kind `cell` (app.runs.cells). An editor's; no model is called."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from app.api.deps import CurrentUser, DbDep, OwnedSession, stream_reader
from app.api.runs import OrchestratorDep
from app.api.sse import SSE_RESPONSE_DOC, frames, sse_response
from app.db import release_connection
from app.runs.cells import new_cell
from app.runs.schemas import CellRequest

router = APIRouter(tags=["runs"])


@router.post(
    "/sessions/{session_id}/cells",
    response_class=StreamingResponse,
    responses={
        **SSE_RESPONSE_DOC,
        400: {"description": "No such source (unknown_source), or none given for SQL"},
        403: {"description": "A viewer cannot run code (forbidden_role)"},
        409: {"description": "The session is busy (code session_busy)"},
    },
)
async def run_cell(
    body: CellRequest,
    session: OwnedSession,
    db: DbDep,
    runs: OrchestratorDep,
    user: CurrentUser,
    request: Request,
) -> StreamingResponse:
    """Run a cell: its code in the session's sandbox (Python), or its query on a project
    source (SQL, kept as a variable); streams the run's events as a question's, without
    model events. The run goes on if the client leaves."""
    run = await new_cell(db, session, body, user.id)
    await release_connection(db)  # the orchestrator records the run with its own sessions
    run = await runs.run_cell(session, run, (user.id, user.email))
    allowed = stream_reader(request, user, session.id)
    return sse_response(frames(runs.follow(run.id, 0), allowed=allowed))

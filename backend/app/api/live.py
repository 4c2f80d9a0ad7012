"""A session's live stream: what happens in it while it is open (GET /sessions/{id}/live)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from app.api.deps import CurrentUser, DbDep, OwnedSession, stream_reader
from app.api.openapi import live_stream_doc
from app.api.sse import started_sse
from app.db import release_connection
from app.live.hub import LiveHub

router = APIRouter(tags=["live"])


def get_live(request: Request) -> LiveHub:
    hub: LiveHub = request.app.state.live
    return hub


LiveDep = Annotated[LiveHub, Depends(get_live)]

LIVE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: live_stream_doc("The session's live events as server-sent events (see LiveEvent)"),
    503: {"description": "Too many live streams open (code too_many_streams); Retry-After"},
}


@router.get(
    "/sessions/{session_id}/live", response_class=StreamingResponse, responses=LIVE_RESPONSES
)
async def session_live(
    session: OwnedSession, db: DbDep, live: LiveDep, user: CurrentUser, request: Request
) -> StreamingResponse:
    """Follow an open session: `presence` first (who has it open, you included) and at each
    change, `run.created` when anyone asks (follow the run with GET /runs/{id}/events),
    `session.updated` for a new title, `comment.created` / `comment.deleted`; `: ping`
    heartbeats. It ends only when the client leaves, or loses access to the session."""
    session_id: uuid.UUID = session.id
    await release_connection(db)  # a stream holds no connection while it is open
    slot = live.take_slot(user.id)
    body = live.stream(
        session_id, (user.id, user.email), slot, stream_reader(request, user, session_id)
    )
    return await started_sse(body)

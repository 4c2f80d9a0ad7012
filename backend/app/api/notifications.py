"""A user's in-app notifications (new comments on answers of the projects they own or edit):
the list, marking read, and the live stream of new ones (GET /notifications/live)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials

from app.api.deps import CurrentUser, DbDep, PageDep, bearer
from app.api.openapi import INBOX_EVENT_SCHEMA, live_stream_doc
from app.api.sse import started_sse
from app.auth import service as auth_service
from app.db import after_commit, release_connection
from app.errors import Unauthorized
from app.live.inbox import Inbox
from app.notifications import service
from app.notifications.schemas import MarkedRead, MarkRead, NotificationOut, NotificationPage

router = APIRouter(tags=["notifications"])


def get_inbox(request: Request) -> Inbox:
    inbox: Inbox = request.app.state.inbox
    return inbox


InboxDep = Annotated[Inbox, Depends(get_inbox)]

INBOX_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: live_stream_doc(
        "Your notification events as server-sent events (see InboxEvent)", INBOX_EVENT_SCHEMA
    ),
    503: {"description": "Too many live streams open (code too_many_streams); Retry-After"},
}


@router.get("/notifications", response_model=NotificationPage)
async def list_notifications(
    db: DbDep,
    user: CurrentUser,
    page: PageDep,
    unread: Annotated[bool, Query(description="Only the unread ones")] = False,
) -> NotificationPage:
    """Your notifications, newest first, with how many are unread."""
    items, total = await service.page(db, user, unread, page.limit, page.offset)
    return NotificationPage(
        items=[NotificationOut.model_validate(n) for n in items],
        total=total,
        unread=await service.unread_count(db, user),
    )


@router.post("/notifications/read", response_model=MarkedRead)
async def mark_notifications_read(
    body: MarkRead, db: DbDep, user: CurrentUser, inbox: InboxDep
) -> MarkedRead:
    """Mark your notifications read: `ids`, or every unread one; your other tabs are told
    (`notification.read` on GET /notifications/live)."""
    marked = await service.mark_read(db, user, body.ids)
    done = MarkedRead(marked=marked, unread=await service.unread_count(db, user))
    user_id, ids = user.id, body.ids
    after_commit(db, lambda: inbox.read(user_id, ids, done.marked, done.unread))
    return done


def token_holds(request: Request, token: str) -> Callable[[], Awaitable[bool]]:
    """What the notification stream asks now and then: does its token still sign its user
    in (not revoked, the password not changed since, the user not disabled)? (Each check
    takes a connection for one query and gives it back.)"""
    factory = request.app.state.session_factory
    key: str = request.app.state.settings.signing_key

    async def allowed() -> bool:
        async with factory() as db:
            try:
                await auth_service.user_for_token(db, token, key)
            except Unauthorized:
                return False
            return True

    return allowed


@router.get("/notifications/live", response_class=StreamingResponse, responses=INBOX_RESPONSES)
async def notifications_live(
    db: DbDep,
    user: CurrentUser,
    inbox: InboxDep,
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    last_event_id: Annotated[str | None, Header(max_length=64)] = None,
) -> StreamingResponse:
    """Follow your notifications: `notification.created` (the item of GET /notifications)
    for each new one of yours, `notification.read` when you mark some read (in any tab);
    `: ping` heartbeats. Each event has an `id:`: reconnect with Last-Event-ID to get what
    came since. It ends only when the client leaves, or the token no longer holds."""
    assert credentials is not None  # CurrentUser needed it
    await release_connection(db)  # a stream holds no connection while it is open
    slot = inbox.take_slot(user.id)
    body = inbox.stream(user.id, slot, token_holds(request, credentials.credentials), last_event_id)
    return await started_sse(body)

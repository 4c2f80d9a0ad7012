"""A user's in-app notifications (new comments on answers of the projects they own or edit)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import CurrentUser, DbDep, PageDep
from app.notifications import service
from app.notifications.schemas import MarkedRead, MarkRead, NotificationOut, NotificationPage

router = APIRouter(tags=["notifications"])


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
async def mark_notifications_read(body: MarkRead, db: DbDep, user: CurrentUser) -> MarkedRead:
    """Mark your notifications read: `ids`, or every unread one."""
    marked = await service.mark_read(db, user, body.ids)
    return MarkedRead(marked=marked, unread=await service.unread_count(db, user))

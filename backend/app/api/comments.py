"""Comments on answers: POST/GET /runs/{id}/comments (any member), DELETE /comments/{id}
(its author or an owner). Each new one reaches the session's live stream and notifies the
project's owners and editors."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Response, status

from app.api.deps import CurrentUser, DbDep, PageDep
from app.api.live import LiveDep
from app.api.notifications import InboxDep
from app.comments import service
from app.comments.schemas import CommentCreate, CommentOut
from app.db import after_commit
from app.models import Run
from app.notifications import service as notifications
from app.notifications.schemas import NotificationOut
from app.ownership import Role
from app.runs.repository import history
from app.schemas import Page

router = APIRouter(tags=["comments"])


async def member_run(run_id: uuid.UUID, db: DbDep, user: CurrentUser) -> Run:
    """A run of a project the caller is a member of, whatever their role (viewers comment)."""
    return await history.get_owned_run(db, user, run_id, Role.viewer)


MemberRun = Annotated[Run, Depends(member_run)]


@router.post(
    "/runs/{run_id}/comments",
    response_model=CommentOut,
    status_code=status.HTTP_201_CREATED,
    responses={400: {"description": "reply_to is no comment of this run (reply_to_not_in_run)"}},
)
async def add_comment(
    body: CommentCreate,
    run: MemberRun,
    db: DbDep,
    user: CurrentUser,
    live: LiveDep,
    inbox: InboxDep,
) -> CommentOut:
    """Comment on the run's answer, or reply to one of its comments (`reply_to`); each
    owner and editor told of it gets `notification.created` on GET /notifications/live."""
    comment = await service.create(db, run, user, body)
    project_id = await service.project_of(db, run)
    told = await notifications.comment_added(db, project_id, run, comment, user)
    made = service.out(comment, user)
    data = made.model_dump(mode="json")
    session_id, run_id = run.session_id, run.id
    after_commit(db, lambda: live.comment_created(session_id, run_id, data))
    for notification in told:
        out = NotificationOut.model_validate(notification).model_dump(mode="json")
        after_commit(db, partial(inbox.created, notification.user_id, out))
    return made


@router.get("/runs/{run_id}/comments", response_model=Page[CommentOut])
async def list_comments(run: MemberRun, db: DbDep, page: PageDep) -> Page[CommentOut]:
    """The run's comments, oldest first; a reply names the comment it answers (`reply_to`)."""
    items, total = await service.page(db, run, page.limit, page.offset)
    return Page(items=items, total=total)


@router.delete("/comments/{comment_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_comment(
    comment_id: uuid.UUID, db: DbDep, user: CurrentUser, live: LiveDep
) -> Response:
    """Delete a comment (its author, or an owner of the project) and the replies under it."""
    comment, run = await service.get_deletable(db, user, comment_id)
    await service.delete_comment(db, comment, run, user)
    session_id, run_id = run.session_id, run.id
    after_commit(db, lambda: live.comment_deleted(session_id, run_id, comment_id))
    return Response(status_code=status.HTTP_204_NO_CONTENT)

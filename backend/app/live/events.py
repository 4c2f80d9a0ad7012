"""The events of a session's live stream (GET /sessions/{id}/live), one model each: the
OpenAPI document describes them, and every event the hub publishes is built from them."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from app.notifications.schemas import NotificationOut


class Person(BaseModel):
    user_id: uuid.UUID
    email: str


class RunCreated(BaseModel):
    """A question (or a cell) was asked in the session: follow it with GET /runs/{id}/events."""

    event: Literal["run.created"] = "run.created"
    session_id: uuid.UUID
    run_id: uuid.UUID
    asked_by: Person
    query: str
    kind: Literal["question", "cell"] = Field(
        default="question", description="A question to the agent, or a member's own cell"
    )


class PresenceChanged(BaseModel):
    """Who has the session open now (each user once); sent first, and at every change."""

    event: Literal["presence"] = "presence"
    session_id: uuid.UUID
    users: list[Person]


class SessionUpdated(BaseModel):
    event: Literal["session.updated"] = "session.updated"
    session_id: uuid.UUID
    title: str


class CommentCreated(BaseModel):
    """A comment on one of the session's answers (the `comment` of POST /runs/{id}/comments)."""

    event: Literal["comment.created"] = "comment.created"
    session_id: uuid.UUID
    run_id: uuid.UUID
    comment: dict[str, Any]


class CommentDeleted(BaseModel):
    event: Literal["comment.deleted"] = "comment.deleted"
    session_id: uuid.UUID
    run_id: uuid.UUID
    comment_id: uuid.UUID


LiveEvent = Annotated[
    RunCreated | PresenceChanged | SessionUpdated | CommentCreated | CommentDeleted,
    Field(discriminator="event"),
]


def asked(
    session_id: uuid.UUID,
    run_id: uuid.UUID,
    by: tuple[uuid.UUID, str],
    query: str,
    kind: Literal["question", "cell"] = "question",
) -> RunCreated:
    return RunCreated(
        session_id=session_id,
        run_id=run_id,
        asked_by=Person(user_id=by[0], email=by[1]),
        query=query,
        kind=kind,
    )


# The events of a user's notification stream (GET /notifications/live) --------------------
class NotificationCreated(BaseModel):
    """A notification for the stream's user (the item of GET /notifications), sent only
    to its recipient."""

    event: Literal["notification.created"] = "notification.created"
    notification: NotificationOut


class NotificationRead(BaseModel):
    """The user marked notifications read (in this tab or another): `ids`, or every unread
    one when null; `unread` is how many remain."""

    event: Literal["notification.read"] = "notification.read"
    ids: list[uuid.UUID] | None
    marked: int
    unread: int


InboxEvent = Annotated[NotificationCreated | NotificationRead, Field(discriminator="event")]

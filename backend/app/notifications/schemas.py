"""Notifications as the API reads them."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.schemas import Schema


class NotificationOut(Schema):
    id: uuid.UUID
    kind: str = Field(description="`comment`: a comment on an answer of one of your projects")
    project_id: uuid.UUID
    session_id: uuid.UUID
    run_id: uuid.UUID
    comment_id: uuid.UUID
    actor_email: str = Field(description="Who wrote it")
    text: str = Field(description="The start of the comment")
    created_at: datetime
    read_at: datetime | None


class NotificationPage(BaseModel):
    items: list[NotificationOut]
    total: int
    unread: int = Field(description="How many of the user's notifications are unread")


class MarkRead(BaseModel):
    ids: list[uuid.UUID] | None = Field(
        None, max_length=500, description="These (default: every unread one of yours)"
    )


class MarkedRead(BaseModel):
    marked: int
    unread: int

"""The live hub of this process: tells a session's feed what happened in it, and serves
the live stream of one open session (its events, who else is in it, heartbeats).

A stream holds no database connection and no thread while it is open: it waits on the feed
(a Redis read, or an in-process condition); every RECHECK_SECONDS it asks, with a connection
taken for one query, whether its reader may still read the session.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Literal

import anyio
from pydantic import BaseModel

from app.infra.events import HEARTBEAT_SECONDS
from app.infra.feeds import FeedEvent, SessionFeed
from app.infra.presence import PRESENCE_SECONDS, Presence, Viewer
from app.live.events import (
    CommentCreated,
    CommentDeleted,
    PresenceChanged,
    SessionUpdated,
    asked,
)
from app.live.slots import LiveStreamSlots, StreamSlot

log = logging.getLogger(__name__)

# How often an open stream asks whether its reader may still read the session.
RECHECK_SECONDS = 10.0


def frame(event: str, data: dict[str, object]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'), default=str)}\n\n"


def _feed_event(model: BaseModel) -> FeedEvent:
    data = model.model_dump(mode="json")
    return FeedEvent(data.pop("event"), data)


class LiveHub:
    def __init__(self, feed: SessionFeed, presence: Presence, slots: LiveStreamSlots):
        self.feed, self.presence, self.slots = feed, presence, slots

    async def _publish(self, session_id: uuid.UUID, model: BaseModel) -> None:
        await self.feed.publish(str(session_id), _feed_event(model))

    # What happened ------------------------------------------------------------------------
    async def run_created(
        self,
        session_id: uuid.UUID,
        run_id: uuid.UUID,
        by: tuple[uuid.UUID, str],
        query: str,
        kind: Literal["question", "cell"] = "question",
    ) -> None:
        """A run was recorded: whoever has the session open follows it. A feed that cannot
        be told only costs the others their live view (they see the run on reload), never
        the run itself."""
        try:
            await self._publish(session_id, asked(session_id, run_id, by, query, kind))
        except Exception:
            log.warning("could not announce run %s on its session's feed", run_id, exc_info=True)

    async def session_updated(self, session_id: uuid.UUID, title: str) -> None:
        await self._publish(session_id, SessionUpdated(session_id=session_id, title=title))

    async def comment_created(
        self, session_id: uuid.UUID, run_id: uuid.UUID, comment: dict[str, object]
    ) -> None:
        model = CommentCreated(session_id=session_id, run_id=run_id, comment=comment)
        await self._publish(session_id, model)

    async def comment_deleted(
        self, session_id: uuid.UUID, run_id: uuid.UUID, comment_id: uuid.UUID
    ) -> None:
        model = CommentDeleted(session_id=session_id, run_id=run_id, comment_id=comment_id)
        await self._publish(session_id, model)

    # The stream ---------------------------------------------------------------------------
    def take_slot(self, user_id: uuid.UUID) -> StreamSlot:
        """A place for one more open stream (TooManyStreams, a 503, past the bounds)."""
        return self.slots.take(user_id)

    async def stream(
        self,
        session_id: uuid.UUID,
        viewer: tuple[uuid.UUID, str],
        slot: StreamSlot,
        allowed: Callable[[], Awaitable[bool]],
        heartbeat: float = HEARTBEAT_SECONDS,
    ) -> AsyncGenerator[str]:
        """The session's live events for `viewer` (their id and email), starting with who is
        in it; it ends when the reader leaves or may no longer read the session, and then
        gives back `slot` and tells the others that the viewer left."""
        sid = str(session_id)
        me = Viewer(uuid.uuid4().hex, str(viewer[0]), viewer[1])
        try:
            after = await self.feed.cursor(sid)
            await self.presence.enter(sid, me, PRESENCE_SECONDS)
            shown = await self._announce_presence(session_id)
            yield frame("presence", {"session_id": sid, "users": shown})
            renewed = checked = time.monotonic()
            async for event in self.feed.follow(sid, after, heartbeat):
                now = time.monotonic()
                if now - checked >= RECHECK_SECONDS:
                    if not await allowed():
                        return
                    checked = now
                if now - renewed >= heartbeat:
                    # Renewed at every heartbeat: a replica that dies leaves no one behind
                    # for longer than PRESENCE_SECONDS, and each stream sees them go.
                    await self.presence.enter(sid, me, PRESENCE_SECONDS)
                    renewed = now
                    users = await self.presence.present(sid)
                    if users != shown:
                        shown = users
                        yield frame("presence", {"session_id": sid, "users": users})
                if event is None:
                    yield ": ping\n\n"
                elif event.event == "presence":
                    # Each join and leave says so; this stream shows only a change.
                    users = event.data["users"]
                    if users != shown:
                        shown = users
                        yield frame(event.event, event.data)
                else:
                    yield frame(event.event, event.data)
        finally:
            slot.release()
            # The reader left (the task is being cancelled): shielded, so the leave is told.
            with anyio.CancelScope(shield=True):
                try:
                    await self.presence.leave(sid, me)
                    await self._announce_presence(session_id)
                except Exception:
                    log.warning("could not tell session %s that a viewer left", sid, exc_info=True)

    async def _announce_presence(self, session_id: uuid.UUID) -> list[dict[str, str]]:
        users = await self.presence.present(str(session_id))
        model = PresenceChanged.model_validate({"session_id": session_id, "users": users})
        await self._publish(session_id, model)
        return users

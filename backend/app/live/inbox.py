"""Each user's notification stream (GET /notifications/live): a new notification reaches its
recipient's open tabs at once, and marking read in one tab clears the count in the others.

A feed per user (a Redis stream across replicas, in-process otherwise), told only of that
user's notifications. A stream holds no database connection and no thread while it is open:
it waits on the feed; every `recheck_seconds` it asks, with a connection taken for one
query, whether its token is still good. Each event carries an `id:` (its place in the feed)
so a client that reconnects with Last-Event-ID misses nothing the feed still holds.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable

from pydantic import BaseModel

from app.infra.events import HEARTBEAT_SECONDS
from app.infra.feeds import FeedEvent, SessionFeed
from app.live.events import NotificationCreated, NotificationRead
from app.live.hub import RECHECK_SECONDS, frame
from app.live.slots import LiveStreamSlots, StreamSlot

log = logging.getLogger(__name__)


def _feed_event(model: BaseModel) -> FeedEvent:
    data = model.model_dump(mode="json")
    return FeedEvent(data.pop("event"), data)


class Inbox:
    def __init__(self, feed: SessionFeed, slots: LiveStreamSlots):
        self.feed, self.slots = feed, slots
        self.recheck_seconds = RECHECK_SECONDS
        self.heartbeat_seconds = HEARTBEAT_SECONDS

    async def _tell(self, user_id: uuid.UUID, model: BaseModel) -> None:
        """Tell the user's open streams; a feed that cannot be told costs them only the live
        count (the bell's fallback refetch and a reload show it), never the notification."""
        try:
            await self.feed.publish(str(user_id), _feed_event(model))
        except Exception:
            log.warning("could not tell user %s of a notification", user_id, exc_info=True)

    async def created(self, user_id: uuid.UUID, notification: dict[str, object]) -> None:
        model = NotificationCreated.model_validate({"notification": notification})
        await self._tell(user_id, model)

    async def read(
        self, user_id: uuid.UUID, ids: list[uuid.UUID] | None, marked: int, unread: int
    ) -> None:
        await self._tell(user_id, NotificationRead(ids=ids, marked=marked, unread=unread))

    def take_slot(self, user_id: uuid.UUID) -> StreamSlot:
        """A place for one more open stream, in the same bounds as the sessions' live
        streams (TooManyStreams, a 503, past them)."""
        return self.slots.take(user_id)

    async def stream(
        self,
        user_id: uuid.UUID,
        slot: StreamSlot,
        allowed: Callable[[], Awaitable[bool]],
        last_event_id: str | None = None,
    ) -> AsyncGenerator[str]:
        """The user's notification events after `last_event_id` (or from now), as they come;
        a `: ready` comment first (the stream is open and following). It ends when the
        reader leaves or their token no longer holds, and then gives back `slot`."""
        uid = str(user_id)
        try:
            after = await self.feed.resume(uid, last_event_id)
            yield ": ready\n\n"
            checked = time.monotonic()
            async for event in self.feed.follow(uid, after, self.heartbeat_seconds):
                now = time.monotonic()
                if now - checked >= self.recheck_seconds:
                    if not await allowed():
                        return
                    checked = now
                if event is None:
                    yield ": ping\n\n"
                else:
                    yield f"id: {event.id}\n" + frame(event.event, event.data)
        finally:
            slot.release()

"""Session feeds: what happens in a session (a question asked, a new title, a comment), told
to everyone who has it open, on whichever replica they are connected.

A Redis stream per session when REDIS_URL is set (trimmed to its last entries and expiring
when nobody writes: it is a wire, not a record), an in-process list otherwise. Unlike a
run's event log a feed has no final event: a reader follows it until it leaves.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from redis.asyncio import Redis

from app.infra.events import HEARTBEAT_SECONDS, RedisRunEventLog, RunEventLog

# A reader that falls this far behind (it never does: it reads as they come) misses the
# oldest; the database keeps what matters, the feed only says "look".
FEED_LENGTH = 200
# A Redis stream entry's id (milliseconds-sequence).
_STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
# A feed nobody wrote to for this long goes (the next event makes it again).
FEED_IDLE_SECONDS = 3600


@dataclass(frozen=True)
class FeedEvent:
    event: str
    data: dict[str, Any]
    # Where it stands in its feed (set by follow): a cursor to resume after it.
    id: str = ""

    def to_json(self) -> str:
        return json.dumps({"event": self.event, "data": self.data}, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str, id: str = "") -> FeedEvent:
        body = json.loads(raw)
        return cls(body["event"], body["data"], id)


class SessionFeed(Protocol):
    name: str

    async def publish(self, session_id: str, event: FeedEvent) -> None: ...

    async def cursor(self, session_id: str) -> str:
        """Where the feed stands now: follow from here to miss nothing said after this call."""

    async def resume(self, session_id: str, last_id: str | None) -> str:
        """A cursor to follow from: `last_id` (an event's id a client saw, its
        Last-Event-ID) when it is one of this feed's, else where the feed stands now."""

    def follow(
        self, session_id: str, after: str, heartbeat: float = HEARTBEAT_SECONDS
    ) -> AsyncIterator[FeedEvent | None]:
        """The session's events after `after` (a cursor), as they come, for as long as the
        caller reads. Yields None whenever `heartbeat` seconds pass without an event.
        """


class RedisSessionFeed:
    """Feeds in Redis streams, on the run event log's clients (writers and followers).
    `kind` names what a feed is of (a session's, or a user's notifications)."""

    name = "redis"

    def __init__(
        self, writer: Redis, followers: Redis, prefix: str = "workbench:", kind: str = "session"
    ):
        self.redis = writer
        self.followers = followers
        self.prefix = prefix
        self.kind = kind

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}{self.kind}:{session_id}:feed"

    async def publish(self, session_id: str, event: FeedEvent) -> None:
        key = self._key(session_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(key, {"e": event.to_json()}, maxlen=FEED_LENGTH, approximate=True)
            pipe.expire(key, FEED_IDLE_SECONDS)
            await pipe.execute()

    async def cursor(self, session_id: str) -> str:
        # The newest entry's id (XREAD's "$" at each read would lose what came between reads).
        newest: Any = await self.redis.xrevrange(self._key(session_id), count=1)
        return str(newest[0][0]) if newest else "0-0"

    async def resume(self, session_id: str, last_id: str | None) -> str:
        if last_id is not None and _STREAM_ID.fullmatch(last_id):
            return last_id
        return await self.cursor(session_id)

    async def follow(
        self, session_id: str, after: str, heartbeat: float = HEARTBEAT_SECONDS
    ) -> AsyncIterator[FeedEvent | None]:
        key = self._key(session_id)
        last = after
        # One pooled connection for the whole stream (as RedisRunEventLog.follow).
        async with self.followers.client() as reader:
            while True:
                reply: Any = await reader.xread({key: last}, block=int(heartbeat * 1000))
                if not reply:
                    yield None
                    continue
                for entry_id, fields in reply[0][1]:
                    last = entry_id
                    yield FeedEvent.from_json(fields["e"], str(entry_id))


@dataclass
class _Feed:
    events: deque[tuple[int, FeedEvent]] = field(default_factory=lambda: deque(maxlen=FEED_LENGTH))
    written: int = 0
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)


# Feeds kept in one process: the least recently written go first past this many.
MAX_FEEDS = 10_000


class InProcessSessionFeed:
    """The same, for one process (embedded mode)."""

    name = "in-process"

    def __init__(self) -> None:
        self._feeds: OrderedDict[str, _Feed] = OrderedDict()

    def _feed(self, session_id: str) -> _Feed:
        feed = self._feeds.get(session_id)
        if feed is None:
            feed = self._feeds[session_id] = _Feed()
            while len(self._feeds) > MAX_FEEDS:
                self._feeds.popitem(last=False)
        self._feeds.move_to_end(session_id)
        return feed

    async def publish(self, session_id: str, event: FeedEvent) -> None:
        feed = self._feed(session_id)
        feed.written += 1
        feed.events.append((feed.written, event))
        async with feed.changed:
            feed.changed.notify_all()

    async def cursor(self, session_id: str) -> str:
        return str(self._feed(session_id).written)

    async def resume(self, session_id: str, last_id: str | None) -> str:
        written = self._feed(session_id).written
        if last_id is not None and last_id.isdigit() and int(last_id) <= written:
            return str(int(last_id))
        return str(written)

    async def follow(
        self, session_id: str, after: str, heartbeat: float = HEARTBEAT_SECONDS
    ) -> AsyncIterator[FeedEvent | None]:
        feed = self._feed(session_id)
        seen = int(after)
        while True:
            pending = [(n, e) for n, e in feed.events if n > seen]
            if not pending:
                async with feed.changed:
                    try:
                        await asyncio.wait_for(feed.changed.wait(), heartbeat)
                    except TimeoutError:
                        yield None
                continue
            for n, event in pending:
                seen = n
                yield FeedEvent(event.event, event.data, str(n))


def create_session_feed(events: RunEventLog, kind: str = "session") -> SessionFeed:
    """A feed on the same backend as the runs' event log (and its Redis clients); `kind`
    keeps feeds of different things apart (each kind gets its own in-process store)."""
    if isinstance(events, RedisRunEventLog):
        return RedisSessionFeed(events.redis, events.followers, events.prefix, kind)
    return InProcessSessionFeed()

"""Presence: who has a session open now, across replicas.

Each open live stream is one entry, renewed at every heartbeat and gone when the stream
ends, or, when its replica died without saying so, once its time runs out: nobody stays
"in the session" for longer than PRESENCE_SECONDS after their replica stopped answering.
A sorted set per session in Redis (score: when the entry runs out), a dict in-process.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis

from app.infra.events import HEARTBEAT_SECONDS, RedisRunEventLog, RunEventLog

# Three heartbeats: a stream renews its entry at each, so a live one never runs out.
PRESENCE_SECONDS = 3 * HEARTBEAT_SECONDS


@dataclass(frozen=True)
class Viewer:
    """One open stream of a user on a session."""

    connection: str
    user_id: str
    email: str

    def to_json(self) -> str:
        return json.dumps([self.connection, self.user_id, self.email], separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Viewer:
        connection, user_id, email = json.loads(raw)
        return cls(connection, user_id, email)


def people(viewers: list[Viewer]) -> list[dict[str, str]]:
    """Each user once (a user may have the session open in two tabs), by email."""
    users = {v.user_id: v.email for v in viewers}
    return [
        {"user_id": user_id, "email": email}
        for user_id, email in sorted(users.items(), key=lambda u: u[1])
    ]


class Presence(Protocol):
    name: str

    async def enter(self, session_id: str, viewer: Viewer, seconds: float) -> None:
        """Mark `viewer` present for `seconds` from now (again at each renewal)."""

    async def leave(self, session_id: str, viewer: Viewer) -> None: ...

    async def present(self, session_id: str) -> list[dict[str, str]]:
        """The users present now: `[{user_id, email}]`, each once, by email."""


class RedisPresence:
    name = "redis"

    def __init__(self, redis: Redis, prefix: str = "workbench:"):
        self.redis = redis
        self.prefix = prefix

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}:presence"

    async def enter(self, session_id: str, viewer: Viewer, seconds: float) -> None:
        key = self._key(session_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {viewer.to_json(): time.time() + seconds})
            pipe.expire(key, int(seconds) + 1)
            await pipe.execute()

    async def leave(self, session_id: str, viewer: Viewer) -> None:
        await self.redis.zrem(self._key(session_id), viewer.to_json())

    async def present(self, session_id: str) -> list[dict[str, str]]:
        key = self._key(session_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, "-inf", time.time())
            pipe.zrange(key, 0, -1)
            _, members = await pipe.execute()
        return people([Viewer.from_json(m) for m in members])


class InProcessPresence:
    name = "in-process"

    def __init__(self) -> None:
        self._sessions: dict[str, dict[Viewer, float]] = {}

    async def enter(self, session_id: str, viewer: Viewer, seconds: float) -> None:
        self._sessions.setdefault(session_id, {})[viewer] = time.monotonic() + seconds

    async def leave(self, session_id: str, viewer: Viewer) -> None:
        viewers = self._sessions.get(session_id, {})
        viewers.pop(viewer, None)
        if not viewers:
            self._sessions.pop(session_id, None)

    async def present(self, session_id: str) -> list[dict[str, str]]:
        now = time.monotonic()
        viewers = self._sessions.get(session_id, {})
        return people([v for v, until in viewers.items() if until > now])


def create_presence(events: RunEventLog) -> Presence:
    """Presence on the same backend as the runs' event log (and its Redis client)."""
    if isinstance(events, RedisRunEventLog):
        return RedisPresence(events.redis, events.prefix)
    return InProcessPresence()

"""Session locks: one run at a time per session, across every backend replica.

A lock is a key holding a random token with a time-to-live. The holder renews it while
its run lives and releases it by compare-and-delete, so a crashed holder's lock expires
by itself and nobody can release a lock they do not hold.
"""

from __future__ import annotations

import secrets
import time
from typing import Protocol

from redis.asyncio import Redis

from app.infra.events import WRITER_CONNECTIONS, redis_pool

# Compare-and-delete / compare-and-extend, atomically on the Redis server.
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
)


class SessionLocks(Protocol):
    name: str

    async def acquire(self, session_id: str, ttl_seconds: float) -> str | None:
        """Take the lock; its token, or None when another holder has it."""

    async def renew(self, session_id: str, token: str, ttl_seconds: float) -> bool:
        """Extend a held lock; False when it expired or is someone else's."""

    async def release(self, session_id: str, token: str) -> bool:
        """Release a held lock; False when it was not held with this token."""

    async def holder(self, session_id: str) -> str | None: ...

    async def ping(self) -> None: ...

    async def close(self) -> None: ...


class RedisSessionLocks:
    name = "redis"

    def __init__(self, url: str, prefix: str = "workbench:"):
        self.redis: Redis = redis_pool(url, WRITER_CONNECTIONS, socket_timeout=5)
        self.prefix = prefix
        self._release = self.redis.register_script(_RELEASE)
        self._renew = self.redis.register_script(_RENEW)

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}lock:session:{session_id}"

    async def acquire(self, session_id: str, ttl_seconds: float) -> str | None:
        token = secrets.token_hex(16)
        ok = await self.redis.set(self._key(session_id), token, nx=True, px=int(ttl_seconds * 1000))
        return token if ok else None

    async def renew(self, session_id: str, token: str, ttl_seconds: float) -> bool:
        result = await self._renew(
            keys=[self._key(session_id)], args=[token, int(ttl_seconds * 1000)]
        )
        return bool(result)

    async def release(self, session_id: str, token: str) -> bool:
        return bool(await self._release(keys=[self._key(session_id)], args=[token]))

    async def holder(self, session_id: str) -> str | None:
        value = await self.redis.get(self._key(session_id))
        return str(value) if value is not None else None

    async def ping(self) -> None:
        await self.redis.ping()

    async def close(self) -> None:
        await self.redis.aclose(close_connection_pool=True)


class InProcessSessionLocks:
    """The same semantics in one process (embedded mode: there is only one replica)."""

    name = "in-process"

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, float]] = {}

    def _current(self, session_id: str) -> str | None:
        entry = self._held.get(session_id)
        if entry is None:
            return None
        token, expires = entry
        if expires <= time.monotonic():
            del self._held[session_id]
            return None
        return token

    async def acquire(self, session_id: str, ttl_seconds: float) -> str | None:
        if self._current(session_id) is not None:
            return None
        token = secrets.token_hex(16)
        self._held[session_id] = (token, time.monotonic() + ttl_seconds)
        return token

    async def renew(self, session_id: str, token: str, ttl_seconds: float) -> bool:
        if self._current(session_id) != token:
            return False
        self._held[session_id] = (token, time.monotonic() + ttl_seconds)
        return True

    async def release(self, session_id: str, token: str) -> bool:
        if self._current(session_id) != token:
            return False
        del self._held[session_id]
        return True

    async def holder(self, session_id: str) -> str | None:
        return self._current(session_id)

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        self._held.clear()


def create_session_locks(redis_url: str | None) -> SessionLocks:
    return RedisSessionLocks(redis_url) if redis_url else InProcessSessionLocks()

"""Run event logs: each run's events in order, readable by any replica while the run lives.

Redis streams when REDIS_URL is set (entry ids are the events' sequence numbers), an
in-process list otherwise. The database keeps every event too; the log is what live
readers follow. Cancel requests travel the same way, so any replica can stop a run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.driver_info import DriverInfo
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.utils import get_lib_version

FINAL_EVENT = "run.finished"
HEARTBEAT_SECONDS = 10.0  # the contract asks for one at least every 15 s
# Redis connections of one process. Writers (runs appending events, cancel checks) and
# followers (each live stream blocks one connection in XREAD) have pools of their own, so
# a crowd of readers can never starve the runs they read. A full pool makes the caller
# wait (up to POOL_WAIT_SECONDS), it does not fail at once.
WRITER_CONNECTIONS = 64
FOLLOWER_CONNECTIONS = 2000
POOL_WAIT_SECONDS = 20.0
# What each new connection tells the server of its client (CLIENT SETINFO), read once: by
# default redis-py reads its own version from the installed packages' metadata for every
# connection it opens, a walk of sys.path on the event loop.
DRIVER = DriverInfo(name="redis-py", lib_version=get_lib_version())


def redis_pool(url: str, size: int, socket_timeout: float) -> Redis:
    """A client whose pool holds at most `size` connections and waits when they are busy.

    A command on a pooled connection that the server (or something between) has closed
    meanwhile is sent once more on a new connection, instead of failing the run that sent
    it; Redis being down still fails within a moment.
    """
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=size,
        timeout=POOL_WAIT_SECONDS,
        decode_responses=True,
        socket_timeout=socket_timeout,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 1),
        retry_on_error=[RedisConnectionError],
        driver_info=DRIVER,
    )
    return Redis(connection_pool=pool)


@dataclass(frozen=True)
class RunEvent:
    seq: int
    event: str
    data: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps({"event": self.event, "data": self.data}, separators=(",", ":"))

    @classmethod
    def from_json(cls, seq: int, raw: str) -> RunEvent:
        body = json.loads(raw)
        return cls(seq, body["event"], body["data"])


class RunEventLog(Protocol):
    name: str

    async def append(self, run_id: str, event: RunEvent) -> None: ...

    async def read(self, run_id: str, after: int) -> list[RunEvent]:
        """Every event with seq > after (empty when the log is gone)."""

    def follow(
        self, run_id: str, after: int, heartbeat: float = HEARTBEAT_SECONDS
    ) -> AsyncIterator[RunEvent | None]:
        """Events after `after` as they come, until the final one.

        Yields None whenever `heartbeat` seconds pass without an event.
        """

    async def exists(self, run_id: str) -> bool: ...

    async def expire(self, run_id: str, seconds: int) -> None: ...

    async def request_cancel(self, run_id: str) -> None: ...

    async def cancel_requested(self, run_id: str) -> bool: ...

    async def cancels_requested(self, run_ids: list[str]) -> set[str]:
        """Which of these runs were asked to stop (one round trip for all)."""
        ...

    async def close(self) -> None: ...


class RedisRunEventLog:
    name = "redis"

    def __init__(self, url: str, prefix: str = "workbench:"):
        self.redis = redis_pool(url, WRITER_CONNECTIONS, socket_timeout=30)
        self.followers = redis_pool(url, FOLLOWER_CONNECTIONS, socket_timeout=30)
        self.prefix = prefix

    def _key(self, run_id: str) -> str:
        return f"{self.prefix}run:{run_id}:events"

    def _cancel_key(self, run_id: str) -> str:
        return f"{self.prefix}run:{run_id}:cancel"

    async def append(self, run_id: str, event: RunEvent) -> None:
        try:
            await self.redis.xadd(self._key(run_id), {"e": event.to_json()}, id=f"{event.seq}-0")
        except ResponseError as exc:
            # Sent again after a lost reply (see redis_pool): the first one had landed.
            if "equal or smaller" not in str(exc) or not await self._holds(run_id, event.seq):
                raise

    async def _holds(self, run_id: str, seq: int) -> bool:
        return bool(await self.redis.xrange(self._key(run_id), f"{seq}-0", f"{seq}-0"))

    @staticmethod
    def _decode(entries: Any) -> list[RunEvent]:
        return [
            RunEvent.from_json(int(entry_id.split("-")[0]), fields["e"])
            for entry_id, fields in entries
        ]

    async def read(self, run_id: str, after: int) -> list[RunEvent]:
        return self._decode(await self.redis.xrange(self._key(run_id), min=f"({after}-0"))

    async def follow(
        self, run_id: str, after: int, heartbeat: float = HEARTBEAT_SECONDS
    ) -> AsyncIterator[RunEvent | None]:
        last = f"{after}-0"
        # One pooled connection for the whole stream: a blocking read holds one anyway, and
        # taking it from the pool and giving it back at every read (the pool's lock, wait
        # and connection check) cost more CPU than the read itself.
        async with self.followers.client() as reader:
            while True:
                # decode_responses=True: a list of [stream name, entries] pairs.
                reply: Any = await reader.xread(
                    {self._key(run_id): last}, block=int(heartbeat * 1000), count=500
                )
                if not reply:
                    yield None
                    continue
                for event in self._decode(reply[0][1]):
                    last = f"{event.seq}-0"
                    yield event
                    if event.event == FINAL_EVENT:
                        return

    async def exists(self, run_id: str) -> bool:
        return bool(await self.redis.exists(self._key(run_id)))

    async def expire(self, run_id: str, seconds: int) -> None:
        await self.redis.expire(self._key(run_id), seconds)
        await self.redis.expire(self._cancel_key(run_id), seconds)

    async def request_cancel(self, run_id: str) -> None:
        await self.redis.set(self._cancel_key(run_id), "1", ex=3600)

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self.redis.exists(self._cancel_key(run_id)))

    async def cancels_requested(self, run_ids: list[str]) -> set[str]:
        if not run_ids:
            return set()
        values = await self.redis.mget([self._cancel_key(run_id) for run_id in run_ids])
        return {run_id for run_id, value in zip(run_ids, values, strict=True) if value is not None}

    async def close(self) -> None:
        await self.followers.aclose(close_connection_pool=True)
        await self.redis.aclose(close_connection_pool=True)


@dataclass
class _Log:
    events: list[RunEvent] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    cancel: bool = False


class InProcessRunEventLog:
    """The same, for one process (embedded mode). Expired logs are dropped after a delay."""

    name = "in-process"

    def __init__(self) -> None:
        self._logs: dict[str, _Log] = {}

    def _log(self, run_id: str) -> _Log:
        return self._logs.setdefault(run_id, _Log())

    async def append(self, run_id: str, event: RunEvent) -> None:
        log = self._log(run_id)
        log.events.append(event)
        async with log.changed:
            log.changed.notify_all()

    async def read(self, run_id: str, after: int) -> list[RunEvent]:
        log = self._logs.get(run_id)
        return [e for e in log.events if e.seq > after] if log else []

    async def follow(
        self, run_id: str, after: int, heartbeat: float = HEARTBEAT_SECONDS
    ) -> AsyncIterator[RunEvent | None]:
        log = self._log(run_id)
        while True:
            pending = [e for e in log.events if e.seq > after]
            if not pending:
                async with log.changed:
                    try:
                        await asyncio.wait_for(log.changed.wait(), heartbeat)
                    except TimeoutError:
                        yield None
                continue
            for event in pending:
                after = event.seq
                yield event
                if event.event == FINAL_EVENT:
                    return

    async def exists(self, run_id: str) -> bool:
        return run_id in self._logs

    async def expire(self, run_id: str, seconds: int) -> None:
        asyncio.get_running_loop().call_later(seconds, self._logs.pop, run_id, None)

    async def request_cancel(self, run_id: str) -> None:
        self._log(run_id).cancel = True

    async def cancel_requested(self, run_id: str) -> bool:
        log = self._logs.get(run_id)
        return bool(log and log.cancel)

    async def cancels_requested(self, run_ids: list[str]) -> set[str]:
        return {run_id for run_id in run_ids if await self.cancel_requested(run_id)}

    async def close(self) -> None:
        self._logs.clear()


def create_event_log(redis_url: str | None) -> RunEventLog:
    return RedisRunEventLog(redis_url) if redis_url else InProcessRunEventLog()

"""Blocking drivers (sqlite3, duckdb) off the event loop: a call runs in a worker thread,
and when the awaiting task is cancelled (a timeout, the consumer gone) the database is
interrupted and the thread is waited for, so that no query outlives its connection."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_thread(work: Callable[[], T], interrupt: Callable[[], object]) -> T:
    """`work()` in a thread; on cancellation, `interrupt()` it and wait for it to end."""
    task = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        interrupt()
        with contextlib.suppress(BaseException):
            await task
        raise


class Stopwatch:
    """Time spent inside the database, so that its own deadline counts only that."""

    def __init__(self, limit_seconds: float):
        self.remaining = limit_seconds
        self._started: float | None = None

    def __enter__(self) -> float:
        """The deadline (a time.monotonic()) of the call that starts now."""
        self._started = time.monotonic()
        return self._started + self.remaining

    def __exit__(self, *exc: object) -> None:
        assert self._started is not None
        self.remaining -= time.monotonic() - self._started

"""Session locks, in-process and on real Redis: same behaviour."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from app.infra.locks import InProcessSessionLocks, RedisSessionLocks, SessionLocks


@pytest.fixture(params=["in-process", "redis"])
async def locks(request: pytest.FixtureRequest) -> AsyncIterator[SessionLocks]:
    if request.param == "redis":
        store: SessionLocks = RedisSessionLocks(
            request.getfixturevalue("redis_url"), prefix="wbtest:"
        )
    else:
        store = InProcessSessionLocks()
    yield store
    await store.close()


async def test_one_holder_at_a_time(locks: SessionLocks) -> None:
    session = str(uuid.uuid4())
    token = await locks.acquire(session, 30)
    assert token is not None
    assert await locks.acquire(session, 30) is None
    assert await locks.holder(session) == token
    assert await locks.release(session, "not-the-token") is False
    assert await locks.acquire(session, 30) is None
    assert await locks.release(session, token) is True
    again = await locks.acquire(session, 30)
    assert again is not None and again != token
    await locks.release(session, again)


async def test_a_lock_expires_unless_renewed(locks: SessionLocks) -> None:
    session = str(uuid.uuid4())
    token = await locks.acquire(session, 0.3)
    assert token is not None
    await asyncio.sleep(0.2)
    assert await locks.renew(session, token, 0.3) is True
    await asyncio.sleep(0.2)
    assert await locks.acquire(session, 1) is None  # renewal kept it
    await asyncio.sleep(0.3)
    assert await locks.renew(session, token, 1) is False  # expired: a crashed holder lets go
    newcomer = await locks.acquire(session, 1)
    assert newcomer is not None
    assert await locks.release(session, token) is False  # the old holder cannot free it
    await locks.release(session, newcomer)

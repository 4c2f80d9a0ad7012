"""Session feeds and presence, in-process and on real Redis: a follower gets what is
published after it started (in order, heartbeats between), nothing from before; presence
lists each user once, forgets who left, and drops an entry whose time ran out (a replica
that died without leaving)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from app.infra.events import InProcessRunEventLog, RedisRunEventLog, RunEventLog
from app.infra.feeds import FeedEvent, create_session_feed
from app.infra.presence import Viewer, create_presence


@pytest.fixture(params=["in-process", "redis"])
async def log(request: pytest.FixtureRequest) -> AsyncIterator[RunEventLog]:
    if request.param == "redis":
        store: RunEventLog = RedisRunEventLog(
            request.getfixturevalue("redis_url"), prefix="wbtest:"
        )
    else:
        store = InProcessRunEventLog()
    yield store
    await store.close()


async def test_a_follower_gets_what_comes_after_it_started_in_order(log: RunEventLog) -> None:
    feed = create_session_feed(log)
    session = str(uuid.uuid4())
    await feed.publish(session, FeedEvent("session.updated", {"title": "before"}))
    cursor = await feed.cursor(session)
    for n in range(3):
        await feed.publish(session, FeedEvent("session.updated", {"title": f"t{n}"}))
    follower = feed.follow(session, cursor, heartbeat=0.05)
    got: list[str] = []
    async for event in follower:
        if event is not None:
            got.append(event.data["title"])
        if len(got) == 3:
            break
    await follower.aclose()  # type: ignore[attr-defined]
    assert got == ["t0", "t1", "t2"]


async def test_a_quiet_feed_yields_heartbeats(log: RunEventLog) -> None:
    feed = create_session_feed(log)
    session = str(uuid.uuid4())
    follower = feed.follow(session, await feed.cursor(session), heartbeat=0.05)
    assert await asyncio.wait_for(anext(follower), 30) is None
    await follower.aclose()  # type: ignore[attr-defined]


async def test_presence_lists_each_user_once_and_forgets_who_left_or_ran_out(
    log: RunEventLog,
) -> None:
    presence = create_presence(log)
    session = str(uuid.uuid4())
    ana_tab, ana_other_tab = (Viewer(uuid.uuid4().hex, "u-ana", "ana@x.org") for _ in range(2))
    bob = Viewer(uuid.uuid4().hex, "u-bob", "bob@x.org")
    await presence.enter(session, bob, 30)
    await presence.enter(session, ana_tab, 30)
    await presence.enter(session, ana_other_tab, 30)
    assert await presence.present(session) == [
        {"user_id": "u-ana", "email": "ana@x.org"},
        {"user_id": "u-bob", "email": "bob@x.org"},
    ]
    await presence.leave(session, ana_tab)
    assert [u["email"] for u in await presence.present(session)] == ["ana@x.org", "bob@x.org"]
    await presence.leave(session, ana_other_tab)
    assert [u["email"] for u in await presence.present(session)] == ["bob@x.org"]
    # Bob's replica died: his entry, no longer renewed, has run out.
    await presence.enter(session, bob, -1)
    assert await presence.present(session) == []

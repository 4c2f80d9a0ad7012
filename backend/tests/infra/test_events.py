"""Run event logs, in-process and on real Redis: order, replay, follow, heartbeats, cancel."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import cast

import pytest
from redis.asyncio import Redis

from app.infra.events import InProcessRunEventLog, RedisRunEventLog, RunEvent, RunEventLog


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


def event(seq: int, name: str = "model.delta") -> RunEvent:
    return RunEvent(seq, name, {"seq": seq, "text": f"part {seq}"})


async def test_replay_after_a_sequence_number(log: RunEventLog) -> None:
    run = str(uuid.uuid4())
    assert not await log.exists(run)
    for seq in range(1, 6):
        await log.append(run, event(seq))
    assert await log.exists(run)
    assert [e.seq for e in await log.read(run, 0)] == [1, 2, 3, 4, 5]
    assert [e.seq for e in await log.read(run, 3)] == [4, 5]
    assert (await log.read(run, 2))[0] == event(3)


async def test_follow_replays_then_waits_then_stops_at_the_final_event(log: RunEventLog) -> None:
    run = str(uuid.uuid4())
    await log.append(run, event(1, "run.started"))
    await log.append(run, event(2))
    seen: list[RunEvent | None] = []

    async def reader() -> None:
        async for item in log.follow(run, 1, heartbeat=0.2):
            seen.append(item)

    task = asyncio.create_task(reader())
    await asyncio.sleep(0.5)  # quiet: heartbeats
    await log.append(run, event(3))
    await log.append(run, event(4, "run.finished"))
    await log.append(run, event(5))  # never read: the stream ended at run.finished
    await asyncio.wait_for(task, 5)
    events = [e for e in seen if e is not None]
    assert [e.seq for e in events] == [2, 3, 4]
    assert None in seen  # a heartbeat came while it was quiet


async def test_cancel_requests_reach_any_reader(log: RunEventLog) -> None:
    run = str(uuid.uuid4())
    await log.append(run, event(1))
    assert not await log.cancel_requested(run)
    await log.request_cancel(run)
    assert await log.cancel_requested(run)


async def test_one_look_tells_which_of_many_runs_were_asked_to_stop(log: RunEventLog) -> None:
    runs = [str(uuid.uuid4()) for _ in range(5)]
    for run in runs:
        await log.append(run, event(1))
    assert await log.cancels_requested(runs) == set()
    await log.request_cancel(runs[1])
    await log.request_cancel(runs[4])
    assert await log.cancels_requested(runs) == {runs[1], runs[4]}
    assert await log.cancels_requested([]) == set()


async def test_a_connection_the_server_closed_is_opened_again_for_the_next_event(
    redis_url: str,
) -> None:
    # Redis restarted, a proxy's idle timeout, a failover: the pool still holds a
    # connection the server has closed. The run's next event must not fail on it.
    store = RedisRunEventLog(redis_url, prefix="wbtest:")
    admin = Redis.from_url(redis_url)
    run_id = str(uuid.uuid4())
    try:
        await store.append(run_id, event(1))
        pooled = await store.redis.client_id()
        assert await admin.execute_command("CLIENT", "KILL", "ID", pooled) == 1
        await store.append(run_id, event(2))
        assert [e.seq for e in await store.read(run_id, 0)] == [1, 2]
        # An event sent twice (its first reply lost) is there once, and no error.
        await store.append(run_id, event(2))
        assert [e.seq for e in await store.read(run_id, 0)] == [1, 2]
    finally:
        await admin.aclose()
        await store.close()


async def _next_event(stream: AsyncIterator[RunEvent | None]) -> RunEvent:
    """The stream's next event, past any heartbeats."""
    while (item := await asyncio.wait_for(anext(stream), 5)) is None:
        pass
    return item


async def test_a_stream_reads_on_one_connection_and_survives_its_loss(redis_url: str) -> None:
    store = RedisRunEventLog(redis_url, prefix="wbtest:")
    admin = Redis.from_url(redis_url, decode_responses=True)
    run_id = str(uuid.uuid4())
    taken = 0
    real_get = store.followers.connection_pool.get_connection

    async def counted_get(*args: object, **kwargs: object) -> object:
        nonlocal taken
        taken += 1
        return await real_get(*args, **kwargs)

    store.followers.connection_pool.get_connection = counted_get  # type: ignore[method-assign]
    seen: list[int] = []
    try:
        # An async generator (closed at the end), typed as the log's iterator.
        stream = cast(AsyncGenerator[RunEvent | None], store.follow(run_id, 0, heartbeat=0.2))
        for seq in range(1, 6):
            await store.append(run_id, event(seq))
            seen.append((await _next_event(stream)).seq)
        assert taken == 1  # five reads, one connection taken from the pool
        # The server drops the stream's connection (a restart, a proxy's idle timeout):
        # the stream goes on, on a new connection.
        clients = await admin.client_list()
        readers = [c["id"] for c in clients if c["cmd"] == "xread"]
        assert readers
        for reader in readers:
            await admin.execute_command("CLIENT", "KILL", "ID", reader)
        await store.append(run_id, event(6, "run.finished"))
        seen.append((await _next_event(stream)).seq)
        assert seen == [1, 2, 3, 4, 5, 6]
        await stream.aclose()
    finally:
        await admin.aclose()
        await store.close()

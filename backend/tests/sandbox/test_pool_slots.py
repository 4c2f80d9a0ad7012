"""The sandbox pool's bound, its queue and its fairness, on the real pool class.

No worker is started here: a slot is bookkeeping until a run acquires it, and eviction
stops a worker that never started (which is instant). What starting does is covered by
tests/api/test_queue.py through the query API.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from app.runs.queue_place import tell_position
from app.runs.sandboxes import SandboxPool, available_memory_mb, default_max_workers
from tests.conftest import stack_settings


def pool(tmp_path: Path, max_workers: int) -> SandboxPool:
    return SandboxPool(stack_settings("embedded", tmp_path, SANDBOX_MAX_WORKERS=max_workers))


def ids(n: int) -> list[uuid.UUID]:
    return [uuid.uuid4() for _ in range(n)]


def test_the_default_bound_is_what_fits_in_three_quarters_of_the_memory(tmp_path: Path) -> None:
    memory = available_memory_mb()
    assert memory is not None and memory > 0
    usable = int(memory * 0.75)
    per_worker = usable // 8
    assert default_max_workers(per_worker) == usable // per_worker  # 8 (or 9 with rounding)
    assert default_max_workers(memory * 4) == 2  # never fewer than two
    assert default_max_workers(1) == 64  # never more than 64
    configured = SandboxPool(stack_settings("embedded", tmp_path))  # SANDBOX_MEMORY_MB=1024
    assert configured.max_workers == default_max_workers(1024)


def test_runs_beyond_the_bound_queue_and_get_slots_as_runs_end(tmp_path: Path) -> None:
    async def scenario() -> None:
        p = pool(tmp_path, 2)
        user = uuid.uuid4()
        a, b, c, d = ids(4)
        first, second = p.claim(a, user), p.claim(b, user)
        assert first.granted.is_set() and second.granted.is_set()
        third, fourth = p.claim(c, user), p.claim(d, user)
        assert not third.granted.is_set() and not fourth.granted.is_set()
        assert (third.position, fourth.position) == (1, 2)
        assert (p.live, p.busy, p.queued) == (2, 2, 2)

        p.release(a)  # a's worker is idle now: evicted for the first in line
        assert third.granted.is_set() and third.evicting is not None
        await third.evicting
        assert a not in p._workers and fourth.position == 1
        assert p.live == 2  # never more workers than the bound

        p.withdraw(fourth)  # cancelled while queued
        assert p.queued == 0
        p.release(b)
        assert not fourth.granted.is_set()  # a withdrawn ticket is never granted

    asyncio.run(scenario())


def test_a_session_with_a_worker_takes_it_back_without_queueing(tmp_path: Path) -> None:
    async def scenario() -> None:
        p = pool(tmp_path, 1)
        user = uuid.uuid4()
        (a,) = ids(1)
        assert p.claim(a, user).granted.is_set()
        p.release(a)
        again = p.claim(a, user)  # its idle worker is still there: no eviction, no wait
        assert again.granted.is_set() and again.evicting is None

    asyncio.run(scenario())


def test_idle_workers_are_evicted_least_recently_used_first(tmp_path: Path) -> None:
    async def scenario() -> None:
        p = pool(tmp_path, 2)
        user = uuid.uuid4()
        old, recent, new = ids(3)
        p.claim(old, user)
        p.claim(recent, user)
        p._workers[old].last_used -= 100  # used longer ago
        p.release(recent)
        p.release(old)
        ticket = p.claim(new, user)
        assert ticket.granted.is_set()
        assert old not in p._workers and recent in p._workers

    asyncio.run(scenario())


def test_one_users_many_sessions_cannot_starve_another_user(tmp_path: Path) -> None:
    async def scenario() -> None:
        p = pool(tmp_path, 2)
        greedy, modest = uuid.uuid4(), uuid.uuid4()
        running = ids(2)
        for session in running:
            assert p.claim(session, greedy).granted.is_set()
        greedy_waiting = [p.claim(s, greedy) for s in ids(5)]
        late = p.claim(uuid.uuid4(), modest)  # asks after all five of greedy's
        assert late.position == 1  # next in line: modest has no busy worker
        assert [t.position for t in greedy_waiting] == [2, 3, 4, 5, 6]

        p.release(running[0])
        assert late.granted.is_set()
        assert not any(t.granted.is_set() for t in greedy_waiting)
        p.release(running[1])
        assert greedy_waiting[0].granted.is_set()  # then greedy's, in the order asked

    asyncio.run(scenario())


def test_a_queued_run_tells_each_move_near_the_front_and_at_most_every_few_seconds_behind() -> None:
    assert tell_position(3, 4, 0.1)  # near the front: every move
    assert tell_position(10, 11, 0.1)
    assert not tell_position(40, 41, 0.1)  # far back: not each of the many moves...
    assert not tell_position(40, 45, 4.9)
    assert tell_position(40, 45, 5.0)  # ...but within a few seconds
    assert not tell_position(7, 7, 60.0)  # no move, nothing to tell
    assert not tell_position(0, 3, 60.0)  # granted: run.started says it

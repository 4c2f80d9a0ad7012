"""How the preview slots are shared between users (app.files.preview_process.FairSlots)."""

from __future__ import annotations

import asyncio

import pytest

from app.files.preview_process import FairSlots, PreviewsBusy


async def _settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


def test_one_user_never_takes_the_last_slot_from_a_user_who_comes_next() -> None:
    """Bob's heavy files take a slot; his second waits, so Alice's small preview, asked
    while his first still runs, starts at once rather than behind both of his."""

    async def scenario() -> None:
        slots = FairSlots(2, max_waiting_per_owner=4, max_waiting=64)
        await slots.acquire("bob")
        bobs_second = asyncio.ensure_future(slots.acquire("bob"))
        await _settle()
        assert not bobs_second.done() and slots.free == 1
        await asyncio.wait_for(slots.acquire("alice"), timeout=60)  # at once: a slot is free
        assert slots.held == {"bob": 1, "alice": 1} and slots.free == 0
        slots.release("bob")  # Bob's first ends: his second goes on
        await _settle()
        assert bobs_second.done() and slots.held == {"bob": 1, "alice": 1}
        slots.release("alice")
        slots.release("bob")
        assert slots.free == 2 and not slots.held

    asyncio.run(scenario())


def test_a_freed_slot_goes_to_the_user_holding_the_fewest() -> None:
    async def scenario() -> None:
        slots = FairSlots(3, max_waiting_per_owner=4, max_waiting=64)
        await slots.acquire("bob")
        await slots.acquire("bob")  # two of three: one is still free for someone else
        bob_waits = asyncio.ensure_future(slots.acquire("bob"))
        await slots.acquire("carol")
        alice_waits = asyncio.ensure_future(slots.acquire("alice"))
        await _settle()
        assert not bob_waits.done() and not alice_waits.done()
        slots.release("bob")
        await _settle()
        assert alice_waits.done() and not bob_waits.done()  # she held none, Bob one
        assert slots.held == {"bob": 1, "carol": 1, "alice": 1}

    asyncio.run(scenario())


def test_a_lone_slot_serves_anyone_and_a_full_queue_refuses() -> None:
    async def scenario() -> None:
        slots = FairSlots(1, max_waiting_per_owner=1, max_waiting=64)
        await slots.acquire("bob")
        waiting = asyncio.ensure_future(slots.acquire("bob"))
        await _settle()
        with pytest.raises(PreviewsBusy):
            await slots.acquire("bob")
        slots.release("bob")
        await _settle()
        assert waiting.done() and slots.held == {"bob": 1}

    asyncio.run(scenario())

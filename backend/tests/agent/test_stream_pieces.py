"""Text pieces of a model's reply that come close together go out as one `model.delta`."""

from __future__ import annotations

import asyncio
from typing import Any

from smolagents.models import ChatMessageStreamDelta

from app.runs.agent_thread import _join_pieces


def piece(text: str) -> tuple[str, Any]:
    return ("item", ChatMessageStreamDelta(content=text))


async def test_pieces_waiting_in_the_queue_are_joined_up_to_the_next_other_entry() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    for entry in (piece("lo"), piece(" wor"), piece("ld"), ("result", "step result"), piece("x")):
        queue.put_nowait(entry)
    joined, held = await _join_pieces(ChatMessageStreamDelta(content="Hel"), queue, 0.05)
    assert joined.content == "Hello world"
    assert held == ("result", "step result")  # handled next, in its order
    assert queue.qsize() == 1  # the piece after it stays for later


async def test_pieces_that_come_within_the_window_are_joined() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, queue.put_nowait, piece("lo"))
    loop.call_later(0.02, queue.put_nowait, piece("!"))
    # Both come before the window's end, whatever the machine's speed: the loop's timers
    # fire in the order of their times.
    joined, held = await _join_pieces(ChatMessageStreamDelta(content="Hel"), queue, 0.5)
    assert joined.content == "Hello!"
    assert held is None


async def test_a_piece_after_the_window_goes_out_as_an_event_of_its_own() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    asyncio.get_running_loop().call_later(0.3, queue.put_nowait, piece("late"))
    first = ChatMessageStreamDelta(content="Thought: ")
    joined, held = await _join_pieces(first, queue, 0.05)
    assert joined is first
    assert held is None
    assert (await queue.get())[1].content == "late"  # still there, for the next event


async def test_anything_but_a_piece_ends_the_wait_at_once() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, queue.put_nowait, piece(" code"))
    loop.call_later(0.02, queue.put_nowait, ("result", "step result"))
    async with asyncio.timeout(20):  # a window of 60 s is not waited out
        joined, held = await _join_pieces(ChatMessageStreamDelta(content="Run"), queue, 60)
    assert joined.content == "Run code"
    assert held == ("result", "step result")


async def test_a_piece_alone_goes_out_unchanged() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    first = ChatMessageStreamDelta(content="Thought: ")
    joined, held = await _join_pieces(first, queue, 0)
    assert joined is first
    assert held is None
    queue.put_nowait(("done", None))
    joined, held = await _join_pieces(first, queue, 0)
    assert joined is first
    assert held == ("done", None)

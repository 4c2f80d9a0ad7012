"""Text pieces of a model's reply that queued up together go out as one `model.delta`."""

from __future__ import annotations

import asyncio
from typing import Any

from smolagents.models import ChatMessageStreamDelta

from app.runs.runner import _join_waiting_pieces


def piece(text: str) -> tuple[str, Any]:
    return ("item", ChatMessageStreamDelta(content=text))


async def test_pieces_waiting_in_the_queue_are_joined_up_to_the_next_other_entry() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    for entry in (piece("lo"), piece(" wor"), piece("ld"), ("result", "step result"), piece("x")):
        queue.put_nowait(entry)
    joined, held = _join_waiting_pieces(ChatMessageStreamDelta(content="Hel"), queue)
    assert joined.content == "Hello world"
    assert held == ("result", "step result")  # handled next, in its order
    assert queue.qsize() == 1  # the piece after it stays for later


async def test_a_piece_alone_goes_out_at_once_unchanged() -> None:
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    first = ChatMessageStreamDelta(content="Thought: ")
    joined, held = _join_waiting_pieces(first, queue)
    assert joined is first
    assert held is None
    queue.put_nowait(("done", None))
    joined, held = _join_waiting_pieces(first, queue)
    assert joined is first
    assert held == ("done", None)

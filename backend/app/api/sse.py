"""Server-sent events: `event:`, `id:`, `data:` frames, `: ping` heartbeats, no proxy buffering."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from fastapi.responses import StreamingResponse

from app.api.openapi import event_stream_doc
from app.infra.events import RunEvent

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}

SSE_RESPONSE_DOC: dict[int | str, dict[str, Any]] = {
    200: event_stream_doc("The run's events as server-sent events (see RunEvent)")
}


def frame(event: RunEvent) -> str:
    data = json.dumps(event.data, separators=(",", ":"))
    return f"event: {event.event}\nid: {event.seq}\ndata: {data}\n\n"


# How often a live stream asks whether its reader may still read the run.
RECHECK_SECONDS = 10.0


async def frames(
    live: AsyncIterator[RunEvent | None] | None = None,
    replay: Iterable[RunEvent] = (),
    allowed: Callable[[], Awaitable[bool]] | None = None,
) -> AsyncIterator[str]:
    """Stored events first, then live ones (None from the live log becomes a heartbeat).

    `allowed`, asked every RECHECK_SECONDS while the stream follows, ends it when it says
    no: a member removed from the project, or a user disabled, stops reading at once.
    """
    for stored in replay:
        yield frame(stored)
    if live is None:
        return
    checked = time.monotonic()
    async for event in live:
        if allowed is not None and time.monotonic() - checked >= RECHECK_SECONDS:
            if not await allowed():
                return
            checked = time.monotonic()
        yield ": ping\n\n" if event is None else frame(event)


def sse_response(body: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)


async def started_sse(body: AsyncGenerator[str]) -> StreamingResponse:
    """A live stream's response, its first frame already taken: whatever the stream holds
    (a slot of a bounded pool) is taken now and given back by its `finally`, even when the
    client leaves before reading a byte."""
    first = await anext(body)

    async def frames() -> AsyncIterator[str]:
        try:
            yield first
            async for chunk in body:
                yield chunk
        finally:
            await body.aclose()

    return sse_response(frames())

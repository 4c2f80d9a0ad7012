"""Server-sent events: `event:`, `id:`, `data:` frames, `: ping` heartbeats, no proxy buffering."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
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


async def frames(
    live: AsyncIterator[RunEvent | None] | None = None, replay: Iterable[RunEvent] = ()
) -> AsyncIterator[str]:
    """Stored events first, then live ones (None from the live log becomes a heartbeat)."""
    for stored in replay:
        yield frame(stored)
    if live is not None:
        async for event in live:
            yield ": ping\n\n" if event is None else frame(event)


def sse_response(body: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)

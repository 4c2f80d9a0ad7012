"""Reading server-sent events the way a browser's EventSource does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Event:
    event: str
    id: int
    data: dict[str, Any]


def read_events(response: httpx.Response) -> Iterator[Event | None]:
    """Events as they arrive; None for each heartbeat comment."""
    name, ident, data = "message", 0, []
    for line in response.iter_lines():
        if line.startswith(":"):
            yield None
        elif line == "":
            if data:
                yield Event(name, ident, json.loads("\n".join(data)))
            name, ident, data = "message", 0, []
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "id":
                ident = int(value)
            elif field == "data":
                data.append(value)


def collect(response: httpx.Response) -> list[Event]:
    """Every event up to and including run.finished."""
    events = []
    for event in read_events(response):
        if event is None:
            continue
        events.append(event)
        if event.event == "run.finished":
            break
    return events


def read_into(response: httpx.Response, seen: list[Event]) -> None:
    """Append events to `seen` as they arrive (for a test that watches from another thread),
    up to and including run.finished."""
    for event in read_events(response):
        if event is not None:
            seen.append(event)
            if event.event == "run.finished":
                return


def until(response: httpx.Response, name: str) -> list[Event]:
    """Every event up to and including the first `name` (or run.finished, whichever first)."""
    events = []
    for event in read_events(response):
        if event is None:
            continue
        events.append(event)
        if event.event in (name, "run.finished"):
            break
    return events

"""Reading server-sent events the way a browser's EventSource does.

Every event read is checked against its definition (app/runs/events.py, which the OpenAPI
document and the SPA's types are made from): a test that reads an event the definition
does not describe fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import TypeAdapter, ValidationError

from app.runs.events import RunEventPayload

DEFINED: TypeAdapter[Any] = TypeAdapter(RunEventPayload)


@dataclass(frozen=True)
class Event:
    event: str
    id: int
    data: dict[str, Any]


def checked(event: Event) -> Event:
    """The event, once it is found to be what its definition says."""
    data = dict(event.data)
    assert data.pop("seq", None) == event.id, f"{event.event}: seq is not the message's id"
    assert isinstance(data.pop("run_id", None), str), f"{event.event}: no run_id"
    try:
        DEFINED.validate_python({**data, "event": event.event})
    except ValidationError as exc:
        raise AssertionError(f"{event.event} does not match its definition: {exc}") from exc
    return event


def read_events(response: httpx.Response) -> Iterator[Event | None]:
    """Events as they arrive; None for each heartbeat comment."""
    name, ident, data = "message", 0, []
    for line in response.iter_lines():
        if line.startswith(":"):
            yield None
        elif line == "":
            if data:
                yield checked(Event(name, ident, json.loads("\n".join(data))))
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

"""Following a session's live stream (GET /sessions/{id}/live), or a user's notification
stream (GET /notifications/live, `InboxReader`), from a thread of the test, the way a browser
keeps it open: its events land in a queue the test reads in order.

Every event read is checked against its definition (app/live/events.py)."""

from __future__ import annotations

import json
import queue
import threading
import time
from typing import Any

import httpx
from pydantic import TypeAdapter

from app.live.events import InboxEvent, LiveEvent

DEFINED: TypeAdapter[Any] = TypeAdapter(LiveEvent)
INBOX_DEFINED: TypeAdapter[Any] = TypeAdapter(InboxEvent)
# A hang, not a deadline: an event the test waits for comes in well under a second.
WAIT_SECONDS = 60.0


class LiveReader:
    """A client's open live stream of one session; `next(name)` returns its next event of
    that name (the others it passes are kept in `seen`, in order)."""

    path = "/sessions/{}/live"
    defined = DEFINED

    def __init__(
        self, client: httpx.Client, session_id: str = "", headers: dict[str, str] | None = None
    ):
        self.client, self.session_id = client, session_id
        self.headers = headers or {}
        # The `id:` of each event read, by the event's place in `seen`'s order of arrival.
        self.ids: list[str] = []
        self.events: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.status: int | None = None
        self._opened = threading.Event()
        self._stop = threading.Event()
        self._response: httpx.Response | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> LiveReader:
        self._thread.start()
        assert self._opened.wait(WAIT_SECONDS), "the live stream did not answer"
        assert self.status == 200, f"the live stream answered {self.status}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._response is not None:
            self._response.close()  # the server sees the client leave now, not at a heartbeat
        self._thread.join(WAIT_SECONDS)

    def _read(self) -> None:
        url = self.path.format(self.session_id)
        try:
            with self.client.stream("GET", url, timeout=None, headers=self.headers) as response:
                self.status = response.status_code
                self._response = response
                self._opened.set()
                name, data, event_id = "message", [], ""
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith(":"):
                        continue
                    if line == "":
                        if data:
                            body = json.loads("\n".join(data))
                            self.defined.validate_python({**body, "event": name})
                            self.ids.append(event_id)
                            self.events.put((name, body))
                        name, data, event_id = "message", [], ""
                    elif line.startswith("event:"):
                        name = line.partition(":")[2].strip()
                    elif line.startswith("id:"):
                        event_id = line.partition(":")[2].strip()
                    elif line.startswith("data:"):
                        data.append(line.partition(":")[2].removeprefix(" "))
        except (httpx.HTTPError, RuntimeError, ValueError):
            pass  # closed from the test's thread as it left
        finally:
            self._opened.set()
            self.events.put(None)

    def next(self, name: str, where: Any = None) -> dict[str, Any]:
        """The next event called `name` (for which `where(data)` holds, if given)."""
        while True:
            item = self.events.get(timeout=WAIT_SECONDS)
            assert item is not None, f"the stream ended before {name}; seen: {self.seen}"
            self.seen.append(item)
            if item[0] == name and (where is None or where(item[1])):
                return item[1]


class InboxReader(LiveReader):
    """A client's open notification stream (GET /notifications/live)."""

    path = "/notifications/live"
    defined = INBOX_DEFINED


def until_closed(slots: Any) -> None:
    """Wait until the server has seen every stream of the test leave (its slots are free)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while slots.open:
        assert time.monotonic() < deadline, "the server never saw the streams close"
        time.sleep(0.01)


def emails(presence: dict[str, Any]) -> list[str]:
    return [u["email"] for u in presence["users"]]

"""Runs beyond the sandbox pool's bound wait in a queue, visibly, and can be cancelled there.

The pool of the live server is set to one worker for these tests. The first run's code
waits until the test drops a file into its workspace, so the queue is observed while the
slot is certainly taken, on a machine of any speed.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_query import _wait_for, finished, names, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, read_events

WAIT_FOR_GO = """
import time
import pandas as pd
ready = False
while not ready:  # (`break` inside `try` would be caught: smolagents raises to break)
    try:
        pd.read_csv('go.csv')
        ready = True
    except Exception:
        time.sleep(0.05)
print('released')
"""


@pytest.fixture
def one_worker(live: LiveServer) -> Iterator[LiveServer]:
    pool = live.state.sandboxes
    bound, limits = pool.max_workers, pool.limits
    pool.max_workers = 1
    # The held step waits for the test, not for a fast machine.
    pool.limits = dataclasses.replace(limits, step_timeout_seconds=60)
    try:
        yield live
    finally:
        pool.max_workers, pool.limits = bound, limits


def new_session(api: Api, title: str) -> dict[str, Any]:
    project = api.project(title)
    response = api.post(f"/projects/{project['id']}/sessions", json={"title": title})
    assert response.status_code == 201, response.text
    return dict(response.json())


def follow(api: Api, session_id: str, query: str) -> tuple[threading.Thread, list[Event]]:
    seen: list[Event] = []

    def read() -> None:
        with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as r:
            assert r.status_code == 200, r.read()
            for event in read_events(r):
                if event is not None:
                    seen.append(event)
                    if event.event == "run.finished":
                        return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, seen


def test_a_run_beyond_the_bound_is_queued_then_runs(
    one_worker: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    holder, waiter, dropped = (
        new_session(alice, "Holder"),
        new_session(bob, "Waiter"),
        new_session(bob, "Dropped"),
    )
    llm.script(code_reply(WAIT_FOR_GO), final_reply("'held'"), final_reply("'waited'"))
    first, held = follow(alice, holder["id"], "Hold the only worker")
    _wait_for(lambda: any(e.event == "step.code" for e in held))

    second, queued = follow(bob, waiter["id"], "Wait for it")
    _wait_for(lambda: bool(queued))
    assert queued[0].event == "run.queued" and queued[0].data["position"] == 1
    queued_run = queued[0].data["run_id"]
    run = bob.get(f"/runs/{queued_run}").json()
    assert run["status"] == "queued" and run["started_at"] is None

    third, dropped_events = follow(bob, dropped["id"], "Never mind")
    _wait_for(lambda: bool(dropped_events))
    assert of(dropped_events, "run.queued")[0]["position"] == 2
    dropped_run = dropped_events[0].data["run_id"]
    cancelled = bob.post(f"/runs/{dropped_run}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    third.join(20)
    end = finished(dropped_events)
    assert end["status"] == "cancelled" and "run.started" not in names(dropped_events)
    # The cancelled run left its session free.
    llm_calls = len(llm.requests)

    workspace = one_worker.settings.DATA_DIR / "workspaces" / holder["id"]
    (workspace / "go.csv").write_text("a\n1\n")
    first.join(30)
    second.join(30)
    assert finished(held)["status"] == "succeeded"
    assert "released" in of(held, "step.output")[0]["output"]
    assert names(queued)[:2] == ["run.queued", "run.started"], names(queued)
    assert finished(queued)["status"] == "succeeded"
    assert of(queued, "final")[0]["answer"] == "waited"
    assert len(llm.requests) == llm_calls + 2  # the dropped run never called the model
    run = bob.get(f"/runs/{queued_run}").json()
    assert run["status"] == "succeeded" and run["started_at"] is not None

    llm.script(final_reply("'free again'"))
    again: list[Event] = []
    with bob.stream("POST", f"/sessions/{dropped['id']}/query", json={"query": "Now?"}) as response:
        assert response.status_code == 200
        again = [e for e in read_events(response) if e is not None]
    assert finished(again)["status"] == "succeeded"
    assert one_worker.state.sandboxes.live == 1  # the bound held throughout

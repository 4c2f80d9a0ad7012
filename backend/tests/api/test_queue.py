"""Runs beyond the sandbox pool's bound wait in a queue, visibly, and can be cancelled there.

The pool of the live server is set to one worker for these tests. The first run's code
waits until the test drops a file into its workspace, so the queue is observed while the
slot is certainly taken, on a machine of any speed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_query import _start_in_background, _wait_for, ask, finished, names, of
from tests.conftest import WAIT_FOR_GO, Api, release
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer


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


def test_a_run_beyond_the_bound_is_queued_then_runs(
    one_worker: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    holder, waiter, dropped = (
        new_session(alice, "Holder"),
        new_session(bob, "Waiter"),
        new_session(bob, "Dropped"),
    )
    llm.script(code_reply(WAIT_FOR_GO), final_reply("'held'"), final_reply("'waited'"))
    first, held = _start_in_background(alice, holder["id"], "Hold the only worker")
    _wait_for(lambda: any(e.event == "step.code" for e in held))

    second, queued = _start_in_background(bob, waiter["id"], "Wait for it")
    _wait_for(lambda: bool(queued))
    assert queued[0].event == "run.queued" and queued[0].data["position"] == 1
    queued_run = queued[0].data["run_id"]
    run = bob.get(f"/runs/{queued_run}").json()
    assert run["status"] == "queued" and run["started_at"] is None

    third, dropped_events = _start_in_background(bob, dropped["id"], "Never mind")
    _wait_for(lambda: bool(dropped_events))
    assert of(dropped_events, "run.queued")[0]["position"] == 2
    dropped_run = dropped_events[0].data["run_id"]
    cancelled = bob.post(f"/runs/{dropped_run}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    third.join(20)
    end = finished(dropped_events)
    assert end["status"] == "cancelled" and "run.started" not in names(dropped_events)
    assert len(llm.requests) == 1  # only the holder's first step: queued runs wait unseen

    release(one_worker, holder)
    first.join(30)
    second.join(30)
    assert finished(held)["status"] == "succeeded"
    assert "released" in of(held, "step.output")[0]["output"]
    assert names(queued)[:2] == ["run.queued", "run.started"], names(queued)
    assert finished(queued)["status"] == "succeeded"
    assert of(queued, "final")[0]["answer"] == "waited"
    assert len(llm.requests) == 3  # the holder's answer and the waiter's: none for the dropped
    run = bob.get(f"/runs/{queued_run}").json()
    assert run["status"] == "succeeded" and run["started_at"] is not None

    llm.script(final_reply("'free again'"))  # the cancelled run left its session free
    assert finished(ask(bob, dropped["id"], "Now?"))["status"] == "succeeded"
    assert one_worker.state.sandboxes.live == 1  # the bound held throughout

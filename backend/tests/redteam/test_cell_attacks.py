"""Hostile code run as the user's own cell (issue 42, point 12): no model stands between the
user and the sandbox, so a cell must be held exactly as an agent's step is. A cell that
loops or eats memory is stopped like a step, escapes stay in, nothing leaks, and the
session goes on; a viewer cannot run one at all."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import Api
from tests.redteam.conftest import Target
from tests.redteam.test_payloads import PAYLOADS, fill, leaked
from tests.support.sse import Event, collect

# Short enough for the loop to be stopped soon, long enough for any real first step.
STEP_TIMEOUT_SECONDS = 8.0

CELL_PAYLOADS = {
    "endless-loop": "while True:\n    pass",
    "sleep-forever": "import time\ntime.sleep(10 ** 6)",
    "memory-bomb": PAYLOADS["exhaustion"]["memory-bomb"],
    "memory-gradual": PAYLOADS["exhaustion"]["memory-gradual"],
    "proc-walk-environ": PAYLOADS["secrets"]["proc-walk-environ"],
    "read-secret-key": PAYLOADS["secrets"]["read-secret-key"],
    "generator-frame-builtins": PAYLOADS["interpreter"]["generator-frame-builtins"],
    "subclasses-walk": PAYLOADS["interpreter"]["subclasses-walk"],
}


def run_cell(api: Api, session_id: str, code: str) -> list[Event]:
    with api.stream(
        "POST", f"/sessions/{session_id}/cells", json={"language": "python", "code": code}
    ) as response:
        assert response.status_code == 200, response.read()
        return collect(response)


@pytest.fixture
def short_steps(target: Target) -> Iterator[Target]:
    """Steps stopped after a few seconds, where the server runs in this process."""
    state = getattr(target.live, "state", None)
    if state is None:  # the deployed stack: its own (the red team's) settings hold
        yield target
        return
    pool = state.sandboxes
    limits = pool.limits
    pool.limits = dataclasses.replace(limits, step_timeout_seconds=STEP_TIMEOUT_SECONDS)
    try:
        yield target
    finally:
        pool.limits = limits


@pytest.mark.parametrize(("name", "code"), list(CELL_PAYLOADS.items()), ids=list(CELL_PAYLOADS))
def test_a_hostile_cell_is_held_like_a_step(short_steps: Target, name: str, code: str) -> None:
    target = short_steps
    marker = target.surroundings.markers / f"redteam-marker-cell-{name}"
    session_id = target.session()
    events = run_cell(target.api, session_id, fill(target, code, marker))
    assert events[-1].event == "run.finished", [e.event for e in events]
    if name in ("endless-loop", "sleep-forever", "memory-bomb", "memory-gradual"):
        # Stopped like a step: the run failed with the step's error, the worker is gone.
        assert events[-1].data["status"] == "failed", events[-1].data
        assert [e.event for e in events].count("step.error") == 1
    assert leaked(target, events) == []
    assert target.surroundings.changes() == []
    assert target.surroundings.connections() == 0
    assert httpx.get(f"{target.live.url}/healthz", timeout=10).status_code == 200

    # The session goes on: its next cell runs.
    after = run_cell(target.api, session_id, "print(40 + 2)")
    assert after[-1].data["status"] == "succeeded", after[-1].data
    assert any(e.event == "step.output" and "42" in e.data["output"] for e in after)
    assert target.api.delete(f"/sessions/{session_id}").status_code == 204

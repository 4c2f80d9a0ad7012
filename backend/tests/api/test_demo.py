"""The demo project (issue 42, point 13), on both stacks: opened once per user from the
no-model home, with its own dataset and a recorded session (real history rows, the chart
and table, the events to replay); an ordinary project otherwise, where cells run with no
model configured at all."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.demo import dataset, recording
from tests.api.test_cells import printed, run_cell
from tests.conftest import Api
from tests.support.server import LiveServer
from tests.support.sse import collect


@pytest.fixture
def no_model(live: LiveServer) -> Iterator[LiveServer]:
    """The server with no model configured (as on a first start without LLM_MODEL)."""
    settings = live.settings
    before = settings.LLM_MODEL, settings.LLM_MODELS
    settings.LLM_MODEL, settings.LLM_MODELS = None, []
    yield live
    settings.LLM_MODEL, settings.LLM_MODELS = before


def test_the_demo_opens_once_per_user_with_its_dataset_and_recorded_session(
    alice: Api, bob: Api, no_model: LiveServer
) -> None:
    assert alice.get("/models").json()["items"] == []
    opened = alice.post("/demo")
    assert opened.status_code == 200, opened.text
    demo = opened.json()
    assert demo["created"] is True
    again = alice.post("/demo").json()
    assert again == {**demo, "created": False}
    projects = alice.get("/projects").json()["items"]
    assert [p["id"] for p in projects] == [demo["project_id"]]
    files = alice.get(f"/projects/{demo['project_id']}/files").json()["items"]
    assert [f["name"] for f in files] == [dataset.NAME]
    content = alice.get(f"/files/{files[0]['id']}/content").content
    assert content == dataset.content() and len(content) < 10_000

    session = alice.get(f"/sessions/{demo['session_id']}").json()
    assert session["recorded"] is True
    recorded = json.loads(recording.PATH.read_text())
    [run] = alice.get(f"/sessions/{demo['session_id']}/runs").json()["items"]
    assert run["query"] == recorded["question"] and run["status"] == "succeeded"
    assert run["final_answer"] == recorded["run"]["final_answer"]
    assert "South" in run["final_answer"]
    assert [s["code"] for s in run["steps"]] == [s["code"] for s in recorded["run"]["steps"]]
    assert "growth %" in run["steps"][0]["output"]
    kinds = sorted(a["kind"] for a in run["artifacts"])
    assert kinds == ["file", "plotly", "table"]
    chart = next(a for a in run["artifacts"] if a["kind"] == "plotly")
    figure = alice.get(f"/artifacts/{chart['id']}/content").json()
    assert figure["layout"]["title"]["text"].startswith("Monthly revenue by region")
    table = next(a for a in run["artifacts"] if a["kind"] == "table")
    assert alice.get(f"/artifacts/{table['id']}/content").json()["row_count"] == 4

    # Its events replay (the browser's Replay), with this copy's ids.
    with alice.stream("GET", f"/runs/{run['id']}/events") as response:
        events = collect(response)
    assert [e.event for e in events] == [e["event"] for e in recorded["events"]]
    assert all(e.data["run_id"] == run["id"] for e in events)
    shown = [e.data["artifact"]["id"] for e in events if e.event == "artifact"]
    assert sorted(shown) == sorted(a["id"] for a in run["artifacts"])

    # An ordinary project otherwise: with no model, a cell runs on its dataset.
    cell = run_cell(
        alice,
        demo["session_id"],
        "import pandas as pd\nprint(pd.read_csv('monthly_sales.csv')['region'].nunique())",
    )
    assert cell[-1].data["status"] == "succeeded", cell[-1].data
    assert printed(cell).strip() == "4"
    question = alice.post(f"/sessions/{demo['session_id']}/query", json={"query": "Why?"})
    assert question.status_code >= 400

    # Each user has their own; another user's ids are not found.
    mine = bob.post("/demo").json()
    assert mine["created"] is True and mine["project_id"] != demo["project_id"]
    assert bob.get(f"/sessions/{demo['session_id']}").status_code == 404


def test_the_recording_is_recorded_with_fresh_ids_for_each_copy() -> None:
    session_id, run_id = uuid.uuid4(), uuid.uuid4()
    loaded, ids = recording.load(session_id, run_id)
    assert loaded["run"]["id"] == str(run_id) and loaded["run"]["session_id"] == str(session_id)
    assert all(e["data"]["run_id"] == str(run_id) for e in loaded["events"])
    assert {a["id"] for a in loaded["run"]["artifacts"]} <= set(ids)
    original: dict[str, Any] = json.loads(recording.PATH.read_text())
    assert original["run"]["id"] not in json.dumps(loaded)


def test_two_first_calls_at_once_make_one_demo(alice: Api, no_model: LiveServer) -> None:
    """A double click (or two tabs) on "Open the demo project": one project, both opened."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: alice.post("/demo"), range(4)))
    assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
    opened = {a.json()["project_id"] for a in answers}
    assert len(opened) == 1
    assert sum(a.json()["created"] for a in answers) == 1
    projects = alice.get("/projects").json()["items"]
    assert [p["id"] for p in projects] == list(opened)

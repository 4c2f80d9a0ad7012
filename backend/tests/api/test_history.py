"""A session's history as the API shows it: runs with steps and artifacts, oldest first.

Runs are written here straight into the database and storage, as the query runner does.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.models import Artifact, Run, RunEventRow, RunStep
from tests.conftest import Api
from tests.support.llm import final_reply
from tests.support.server import LiveServer
from tests.support.sse import read_events

FIGURE = json.dumps({"data": [{"type": "bar", "x": ["N", "S"], "y": [3, 5]}]}).encode()


async def record_run(live: LiveServer, session_id: str, query: str, minutes_ago: int) -> str:
    storage = live.state.storage
    when = datetime.now(UTC) - timedelta(minutes=minutes_ago)
    run = Run(
        session_id=uuid.UUID(session_id),
        status="succeeded",
        query=query,
        model="openai/test",
        final_answer="South sells more.",
        tokens_in=120,
        tokens_out=30,
        cost_usd=0.0012,
        created_at=when,
        started_at=when,
        finished_at=when + timedelta(seconds=3),
    )
    run.steps = [
        RunStep(
            index=1,
            thought="Load the data",
            code="df = pd.read_csv('s.csv')",
            output="",
            duration_ms=40,
            tokens_in=60,
            tokens_out=10,
        ),
        RunStep(
            index=2,
            thought="Plot",
            code="fig.show()",
            error=None,
            output="ok",
            duration_ms=80,
            tokens_in=60,
            tokens_out=20,
        ),
    ]
    key = f"sessions/{session_id}/artifacts/{uuid.uuid4().hex}"

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield FIGURE

    await storage.put(key, one_chunk(), "application/vnd.plotly.v1+json")
    async with live.state.session_factory() as db:
        db.add(run)
        await db.flush()
        db.add(
            Artifact(
                run_id=run.id,
                session_id=run.session_id,
                step=2,
                kind="plotly",
                name="sales.json",
                mime="application/vnd.plotly.v1+json",
                size=len(FIGURE),
                storage_key=key,
                created_at=when,
            )
        )
        await db.commit()
    return str(run.id)


def test_a_session_shows_its_runs_oldest_first_with_steps_and_artifacts(
    alice: Api, live: LiveServer
) -> None:
    project = alice.project()
    session = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    assert alice.get(f"/sessions/{session['id']}/runs").json() == {"items": [], "total": 0}

    second = live.call(record_run(live, session["id"], "And by month?", minutes_ago=1))
    first = live.call(record_run(live, session["id"], "Which region sells more?", minutes_ago=5))

    runs = alice.get(f"/sessions/{session['id']}/runs").json()
    assert runs["total"] == 2
    assert [r["id"] for r in runs["items"]] == [first, second]
    run = runs["items"][0]
    assert run["query"] == "Which region sells more?" and run["status"] == "succeeded"
    assert run["final_answer"] == "South sells more." and run["cost_usd"] == 0.0012
    assert [s["index"] for s in run["steps"]] == [1, 2]
    assert run["steps"][0]["code"] == "df = pd.read_csv('s.csv')"
    assert run["artifacts"][0]["kind"] == "plotly"

    artifacts = alice.get(f"/sessions/{session['id']}/artifacts").json()
    assert artifacts["total"] == 2
    artifact = artifacts["items"][0]
    assert artifact["url"] == f"/api/v1/artifacts/{artifact['id']}/content"
    assert alice.get(f"/artifacts/{artifact['id']}").json() == artifact
    content = alice.get(f"/artifacts/{artifact['id']}/content")
    assert content.content == FIGURE
    assert content.headers["content-type"] == "application/vnd.plotly.v1+json"


def test_another_users_history_is_not_found(alice: Api, bob: Api, live: LiveServer) -> None:
    project = alice.project()
    session = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    live.call(record_run(live, session["id"], "q", minutes_ago=1))
    artifact = alice.get(f"/sessions/{session['id']}/artifacts").json()["items"][0]
    for path in (
        f"/sessions/{session['id']}/runs",
        f"/sessions/{session['id']}/artifacts",
        f"/artifacts/{artifact['id']}",
        f"/artifacts/{artifact['id']}/content",
    ):
        assert bob.get(path).status_code == 404, path
    assert alice.get(f"/artifacts/{artifact['id']}/content").content == FIGURE


def test_deleting_a_session_or_project_deletes_artifact_bytes(alice: Api, live: LiveServer) -> None:
    project = alice.project()
    one = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    two = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    live.call(record_run(live, one["id"], "q1", minutes_ago=2))
    live.call(record_run(live, two["id"], "q2", minutes_ago=1))
    assert len(live.call(live.state.storage.list_keys())) == 2

    assert alice.delete(f"/sessions/{one['id']}").status_code == 204
    assert alice.get(f"/sessions/{one['id']}/runs").status_code == 404
    assert len(live.call(live.state.storage.list_keys())) == 1

    assert alice.delete(f"/projects/{project['id']}").status_code == 204
    assert live.call(live.state.storage.list_keys()) == []


@pytest.mark.parametrize("server", ["services"], indirect=True)
def test_a_run_is_stored_whole_before_its_end_is_announced(
    alice: Api, session, llm, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    """A client that acts on run.finished (deletes the session, reads the history) finds
    every event stored: nothing is written after the end is announced. The events table is
    held locked from the answer on, so a run.finished sent before its rows are stored would
    arrive while they cannot be."""
    llm.script(final_reply("'Done.'"))
    held: dict[str, AsyncConnection] = {}

    async def lock_events() -> None:
        connection = await live.state.engine.connect()
        await connection.begin()
        await connection.execute(text("LOCK TABLE run_events IN EXCLUSIVE MODE"))
        held["connection"] = connection

    async def unlock_events() -> None:
        connection = held.pop("connection")
        await connection.rollback()
        await connection.close()

    async def stored(run_id: str) -> int:
        async with live.state.session_factory() as db:
            query = select(func.count()).where(RunEventRow.run_id == uuid.UUID(run_id))
            return int(await db.scalar(query) or 0)

    path = f"/sessions/{session['id']}/query"
    timer = threading.Timer(5, lambda: live.call(unlock_events()))
    try:
        with alice.stream("POST", path, json={"query": "Done?"}) as response:
            for event in read_events(response):
                if event is None:
                    continue
                if event.event == "final":
                    live.call(lock_events())
                    timer.start()
                if event.event == "run.finished":
                    # At this moment, before anything else happens: all of it is stored.
                    assert live.call(stored(event.data["run_id"])) == event.id
                    break
    finally:
        timer.join()
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204

"""A small database pool is enough: no request holds a connection while it waits on another,
and an exhausted pool answers 503 with Retry-After, not a 500 or a stall.

Each stack gets a server whose pool has exactly one connection. Before the fix a query held
the request's connection while the run asked for a second one, so one connection (or, at
scale, twenty connections and fifty queries) deadlocked until the pool timed out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from tests.api.conftest import SALES
from tests.api.test_query import _start_in_background, _wait_for, ask, finished
from tests.conftest import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    STACKS,
    WAIT_FOR_GO,
    Api,
    release,
    reset_state,
    services_overrides,
    stack_settings,
)
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

ONE_CONNECTION = {
    "DATABASE_POOL_SIZE": 1,
    "DATABASE_MAX_OVERFLOW": 0,
    "DATABASE_POOL_TIMEOUT_SECONDS": 1,
    "DATABASE_RUNS_POOL_SIZE": 1,
}


@pytest.fixture(params=STACKS)
def tiny_pool(
    request: pytest.FixtureRequest, tmp_path: Path, llm: ScriptedLLM
) -> Iterator[LiveServer]:
    extra: dict[str, Any] = {}
    if request.param == "services":
        extra = services_overrides(
            request.getfixturevalue("postgres_url"),
            request.getfixturevalue("redis_url"),
            request.getfixturevalue("s3_server"),
            "tiny-pool",
        )
    settings = stack_settings(
        request.param, tmp_path, LLM_API_BASE=llm.api_base, **ONE_CONNECTION, **extra
    )
    live = LiveServer(settings).start()
    live.call(reset_state(live))
    llm.script()
    yield live
    live.stop()


def test_one_connection_serves_uploads_previews_and_a_whole_run(
    tiny_pool: LiveServer, llm: ScriptedLLM
) -> None:
    with Api(tiny_pool).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        project = admin.project()
        uploaded = admin.upload(project["id"], "sales data.csv", SALES)
        assert uploaded.status_code == 201, uploaded.text
        preview = admin.get(f"/files/{uploaded.json()['id']}/preview")
        assert preview.status_code == 200 and preview.json()["row_count"] == 4
        session = admin.post(f"/projects/{project['id']}/sessions", json={}).json()
        llm.script(
            code_reply("import pandas as pd\nprint(len(pd.read_csv('sales data.csv')))"),
            final_reply("'four rows'"),
        )
        events = ask(admin, session["id"], "How many rows?")
        assert finished(events)["status"] == "succeeded"
        assert [e.data["answer"] for e in events if e.event == "final"] == ["four rows"]


def test_an_exhausted_pool_answers_503_with_retry_after_then_recovers(
    tiny_pool: LiveServer,
) -> None:
    with Api(tiny_pool).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        project = admin.project()
        engine = tiny_pool.state.engine

        held = tiny_pool.call(hold(engine))  # the only connection, taken by "someone else"
        try:
            busy = admin.get(f"/projects/{project['id']}")
            assert busy.status_code == 503
            assert busy.json()["code"] == "server_busy"
            assert "database connections are in use" in busy.json()["detail"]
            assert int(busy.headers["Retry-After"]) > 0
            assert httpx.get(f"{tiny_pool.url}/healthz").status_code == 200  # unrelated: fine
        finally:
            tiny_pool.call(held.close())
        again = admin.get(f"/projects/{project['id']}")
        assert again.status_code == 200 and again.json()["name"] == project["name"]


def test_a_run_goes_on_while_requests_hold_every_connection(
    tiny_pool: LiveServer, llm: ScriptedLLM
) -> None:
    pool = tiny_pool.state.sandboxes
    pool.limits = dataclasses.replace(pool.limits, step_timeout_seconds=60)  # held for the test
    with Api(tiny_pool).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        project = admin.project()
        session = admin.post(f"/projects/{project['id']}/sessions", json={}).json()
        llm.script(code_reply(WAIT_FOR_GO), final_reply("'went on'"))
        thread, seen = _start_in_background(admin, session["id"], "Wait, then answer")
        _wait_for(lambda: any(e.event == "step.code" for e in seen), 60)
        # A flood of requests has every request connection: the run has a pool of its own.
        held = tiny_pool.call(hold(tiny_pool.state.engine))
        try:
            assert admin.get(f"/projects/{project['id']}").status_code == 503
            release(tiny_pool, session)
            thread.join(120)
            end = finished(seen)
        finally:
            tiny_pool.call(held.close())
        assert end["status"] == "succeeded", end  # its steps and its end were stored meanwhile
        run = admin.get(f"/runs/{seen[0].data['run_id']}").json()
        assert run["status"] == "succeeded" and run["final_answer"] == "went on"
        assert any(e.event == "step.output" and "released" in e.data["output"] for e in seen)


async def hold(engine: AsyncEngine) -> AsyncConnection:
    """Take a connection of the engine's pool (as a request would) and keep it."""
    connection = await engine.connect()
    await connection.exec_driver_sql("SELECT 1")
    return connection

"""A backing service dies in the middle of a run: Postgres, Redis, S3 or the model provider.

Each is reached through a TCP proxy that the test cuts while the run's code step is
waiting (its code polls the workspace for a file the test drops there, so the moment is
certain on a machine of any speed). What a user must see: the run ends `failed` with a
sentence that names the service, the stream ends with `run.finished`, `/readyz` names the
service while it is down, nothing already stored is lost, and once the service is back the
run's record is whole and the same session answers the next question. (A backend process
killed mid-run is tested in test_replicas.py.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    WAIT_FOR_GO,
    Api,
    release,
    reset_state,
    services_overrides,
    stack_settings,
)
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.proxy import CuttableProxy
from tests.support.server import LiveServer
from tests.support.sse import Event, read_into

# The step waits for the test (WAIT_FOR_GO), then shows a chart.
HELD_THEN_CHART = WAIT_FOR_GO + "import plotly.express as px\npx.bar(x=['a'], y=[1]).show()\n"
FIRST_CHART = "import plotly.express as px\npx.bar(x=['x'], y=[3]).show()\nkept = 41"


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    postgres_url: str,
    redis_url: str,
    s3_server: Any,
    llm: ScriptedLLM,
) -> Iterator[tuple[LiveServer, dict[str, CuttableProxy]]]:
    pg, rd = urlsplit(postgres_url), urlsplit(redis_url)
    s3_host, s3_port = s3_server.endpoint.split(":")
    proxies = {
        "database": CuttableProxy(pg.hostname or "127.0.0.1", pg.port or 5432).start(),
        "locks": CuttableProxy(rd.hostname or "127.0.0.1", rd.port or 6379).start(),
        "storage": CuttableProxy(s3_host, int(s3_port)).start(),
        "llm": CuttableProxy("127.0.0.1", llm.port).start(),
    }
    overrides = services_overrides(
        postgres_url.replace(pg.netloc, f"{pg.username}@{proxies['database'].address}"),
        redis_url.replace(rd.netloc, proxies["locks"].address),
        s3_server,
        "faults",
    )
    overrides |= {
        "S3_ENDPOINT": proxies["storage"].address,
        "LLM_API_BASE": f"http://{proxies['llm'].address}/v1",
        "SANDBOX_STEP_TIMEOUT_SECONDS": 60,  # the held step waits for the test
        "SESSION_LOCK_TTL_SECONDS": 6,
        "DATABASE_POOL_TIMEOUT_SECONDS": 5,
    }
    data_dir = tmp_path_factory.mktemp("faults")
    live = LiveServer(stack_settings("services", data_dir, **overrides)).start()
    yield live, proxies
    for proxy in proxies.values():
        proxy.restore()
    live.stop()
    for proxy in proxies.values():
        proxy.stop()


@pytest.fixture
def faulty(
    stack: tuple[LiveServer, dict[str, CuttableProxy]],
) -> Iterator[tuple[LiveServer, dict[str, CuttableProxy], Api]]:
    live, proxies = stack
    for proxy in proxies.values():
        proxy.restore()
    live.call(reset_state(live))
    with Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        yield live, proxies, admin
    for proxy in proxies.values():
        proxy.restore()


def wait_for(predicate: Any, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def start(api: Api, session_id: str, query: str) -> tuple[threading.Thread, list[Event]]:
    seen: list[Event] = []

    def read() -> None:
        with api.stream(
            "POST", f"/sessions/{session_id}/query", json={"query": query}, timeout=None
        ) as response:
            read_into(response, seen)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, seen


def ready_checks(live: LiveServer) -> dict[str, str]:
    response = httpx.get(f"{live.url}/readyz", timeout=30)
    return dict(response.json()["checks"]) if response.status_code == 503 else {}


def run_until_cut(
    live: LiveServer, api: Api, llm: ScriptedLLM, proxy: CuttableProxy
) -> tuple[dict[str, Any], str, list[Event]]:
    """A session whose first question stored a chart and left a variable; its second
    question's step is held, the service is cut, then the step is released. Returns the
    session, the second run's id and its events up to run.finished."""
    project = api.project("Faults")
    session = api.post(f"/projects/{project['id']}/sessions", json={"title": "F"}).json()
    llm.script(code_reply(FIRST_CHART), final_reply("'kept'"))
    with api.stream("POST", f"/sessions/{session['id']}/query", json={"query": "one"}) as r:
        first: list[Event] = []
        read_into(r, first)
    assert first[-1].data["status"] == "succeeded"

    llm.script(code_reply(HELD_THEN_CHART), final_reply("'done'"))
    thread, seen = start(api, session["id"], "two")
    wait_for(lambda: any(e.event == "step.code" for e in seen))
    run_id = seen[0].data["run_id"]
    proxy.cut()
    release(live, session)
    thread.join(120)
    assert seen and seen[-1].event == "run.finished", [e.event for e in seen]
    return session, run_id, seen


def after_recovery(
    api: Api, llm: ScriptedLLM, proxy: CuttableProxy, session: dict[str, Any], run_id: str
) -> dict[str, Any]:
    """Bring the service back: the run's record, and the session answering again."""
    proxy.restore()
    wait_for(lambda: api.get(f"/runs/{run_id}").json()["status"] == "failed")
    run = api.get(f"/runs/{run_id}").json()
    artifacts = api.get(f"/sessions/{session['id']}/artifacts").json()["items"]
    first_chart = artifacts[0]
    assert api.get(f"/artifacts/{first_chart['id']}/content").status_code == 200

    llm.script(code_reply("print(kept + 1)"), final_reply("'42'"))

    def answered() -> bool:
        with api.stream(
            "POST", f"/sessions/{session['id']}/query", json={"query": "three"}
        ) as response:
            if response.status_code == 409:  # the lock of the failed run is still expiring
                time.sleep(0.5)
                return False
            events: list[Event] = []
            read_into(response, events)
        outputs = [e.data["output"] for e in events if e.event == "step.output"]
        assert events[-1].data["status"] == "succeeded", events[-1].data
        assert outputs[0].strip() == "42"
        return True

    wait_for(answered)
    return dict(run)


def test_the_database_going_away_mid_run(faulty, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    live, proxies, api = faulty
    session, run_id, seen = run_until_cut(live, api, llm, proxies["database"])
    end = seen[-1].data
    assert end["status"] == "failed"
    assert end["error"].startswith("The database stopped answering, so the run was stopped.")
    assert ready_checks(live)["database"].startswith("error")
    run = after_recovery(api, llm, proxies["database"], session, run_id)
    assert run["error"] == end["error"]  # recorded once the database answered again
    with api.stream("GET", f"/runs/{run_id}/events") as response:
        replayed: list[Event] = []
        read_into(response, replayed)
    assert [e.event for e in replayed] == [e.event for e in seen]


def test_redis_going_away_mid_run(faulty, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    live, proxies, api = faulty
    session, run_id, seen = run_until_cut(live, api, llm, proxies["locks"])
    end = seen[-1].data
    assert end["status"] == "failed"
    assert end["error"].startswith("Redis (session locks and live events) stopped answering")
    assert ready_checks(live)["locks"].startswith("error")
    # Followed from the database meanwhile: a new follower gets the whole run.
    with api.stream("GET", f"/runs/{run_id}/events") as response:
        followed: list[Event] = []
        read_into(response, followed)
    assert followed[-1].event == "run.finished" and followed[-1].data["error"] == end["error"]
    run = after_recovery(api, llm, proxies["locks"], session, run_id)
    assert run["error"] == end["error"]


def test_object_storage_going_away_mid_run(faulty, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    live, proxies, api = faulty
    session, run_id, seen = run_until_cut(live, api, llm, proxies["storage"])
    end = seen[-1].data
    assert end["status"] == "failed"
    assert end["error"].startswith("Object storage stopped answering, so the run was stopped")
    assert ready_checks(live)["storage"].startswith("error")
    run = after_recovery(api, llm, proxies["storage"], session, run_id)
    assert run["error"] == end["error"]
    # The step's own output was kept with the run.
    assert any(e.event == "step.output" and "released" in e.data["output"] for e in seen)


def test_the_model_provider_going_away_mid_run(faulty, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    live, proxies, api = faulty
    session, run_id, seen = run_until_cut(live, api, llm, proxies["llm"])
    end = seen[-1].data
    assert end["status"] == "failed"
    assert "closed the connection in the middle of its reply" in end["error"] or (
        end["error"].startswith("Could not reach the model server at ")
    ), end["error"]
    artifacts = [e for e in seen if e.event == "artifact"]
    assert artifacts  # the step finished and what it showed was kept
    run = after_recovery(api, llm, proxies["llm"], session, run_id)
    assert run["error"] == end["error"]
    stored = api.get(f"/sessions/{session['id']}/artifacts").json()["items"]
    assert len(stored) == 1 + len(artifacts)

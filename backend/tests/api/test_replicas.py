"""Three backend replicas on one Postgres, Redis and S3, each with its own disk.

What a team behind a load balancer meets: a question asked through one replica is followed
from a second and stopped from a third; a replica that dies mid-run leaves no stuck run and
no locked session, and the session goes on elsewhere with the variables it had at the end
of its last finished question (its workspace rebuilt from object storage).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import services
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.replicas import BackendProcess
from tests.support.sse import Event, collect, read_into
from tests.support.workspaces import project_file

ADMIN_EMAIL, ADMIN_PASSWORD = "admin@example.com", "replica-admin-password"
LOCK_TTL_SECONDS = 9
SALES = b"region,revenue\nNorth,1200.5\nSouth,980\nNorth,1310.25\nSouth,1000\n"
LOOP = "import time\nprint('working')\nwhile True:\n    time.sleep(0.2)"
INTERRUPTED = "This run was interrupted: the server running it stopped. Ask again."


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory,
    s3_server: services.S3Server,
    redis_url: str,
    llm: ScriptedLLM,
) -> Iterator[list[BackendProcess]]:
    postgres_url, database = services.create_postgres_database()
    root = tmp_path_factory.mktemp("replicas")
    base = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "SANDBOX_"))},
        "ENVIRONMENT": "test",
        "LOG_LEVEL": "info",
        "DATABASE_URL": postgres_url,
        "REDIS_URL": redis_url,
        "S3_ENDPOINT": s3_server.endpoint,
        "S3_ACCESS_KEY": s3_server.access_key,
        "S3_SECRET_KEY": s3_server.secret_key,
        "S3_BUCKET": f"replicas-{database[-10:]}",
        "AGENT_PLANNING_INTERVAL": "0",
        "AGENT_VERIFY_ROUNDS": "0",
        "LLM_MODEL": "openai/scripted",
        "LLM_API_BASE": llm.api_base,
        "LLM_API_KEY": "replica-key-not-a-secret",
        "ADMIN_EMAIL": ADMIN_EMAIL,
        "ADMIN_PASSWORD": ADMIN_PASSWORD,
        "SECRET_KEY": "replicas-" + "k" * 40,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SESSION_LOCK_TTL_SECONDS": str(LOCK_TTL_SECONDS),
        "SANDBOX_MAX_WORKERS": "2",
    }
    started = [
        BackendProcess(
            root / f"replica-{n}",
            {**base, "PORT": str(services.free_port()), "DATA_DIR": str(root / f"data-{n}")},
        )
        for n in (1, 2, 3)
    ]
    try:
        started[0].start().wait_ready()  # the first one migrates the empty database
        for replica in started[1:]:
            replica.start()
        for replica in started[1:]:
            replica.wait_ready()
        yield started
    finally:
        for replica in started:
            replica.stop()
        services.drop_postgres_database(database)


def client(replica: BackendProcess, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"{replica.url}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )


def login(replica: BackendProcess) -> str:
    response = httpx.post(
        f"{replica.url}/api/v1/auth/login",
        json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def ask(api: httpx.Client, session_id: str, query: str) -> list[Event]:
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
        assert response.status_code == 200, response.read()
        return collect(response)


def in_background(
    api: httpx.Client, method: str, path: str, **kwargs: Any
) -> tuple[threading.Thread, list[Event]]:
    """Read an event stream in a thread until run.finished, or until its replica dies."""
    seen: list[Event] = []

    def read() -> None:
        try:
            with api.stream(method, path, timeout=None, **kwargs) as response:
                read_into(response, seen)
        except httpx.HTTPError:
            pass  # the replica died

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, seen


def start_and_watch(
    asker: httpx.Client, watcher: httpx.Client, session_id: str, query: str
) -> tuple[str, threading.Thread, list[Event]]:
    """Ask through one replica; once its code runs, follow the run from another."""
    _, asked = in_background(asker, "POST", f"/sessions/{session_id}/query", json={"query": query})
    wait_for(lambda: any(e.event == "step.code" for e in asked))
    run_id = asked[0].data["run_id"]
    thread, watched = in_background(watcher, "GET", f"/runs/{run_id}/events")
    wait_for(lambda: any(e.event == "step.code" for e in watched))
    return run_id, thread, watched


def wait_for(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def finished(events: list[Event]) -> dict[str, Any]:
    assert events and events[-1].event == "run.finished", [e.event for e in events]
    return events[-1].data


def test_three_replicas_share_sessions_streams_cancels_and_survive_a_death(
    replicas: list[BackendProcess], llm: ScriptedLLM
) -> None:
    first, second, third = replicas
    token = login(first)
    one, two, three = client(first, token), client(second, token), client(third, token)

    project = one.post("/projects", json={"name": "Sales"}).json()
    upload = one.post(f"/projects/{project['id']}/files", files={"file": ("sales.csv", SALES)})
    assert upload.status_code == 201, upload.text
    session = one.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()

    # A finished question leaves variables behind (snapshotted to object storage).
    llm.script(
        code_reply(
            "import pandas as pd\ndf = pd.read_csv('sales.csv')\n"
            "totals = df.groupby('region')['revenue'].sum()\nprint(totals)"
        ),
        final_reply("'North leads.'"),
    )
    assert finished(ask(one, session["id"], "Revenue by region?"))["status"] == "succeeded"

    # Started on replica 1, followed from replica 2, stopped from replica 3.
    llm.script(code_reply(LOOP), final_reply("'never'"))
    run_id, watcher, watched = start_and_watch(one, two, session["id"], "Loop until stopped")
    cancelled = three.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    watcher.join(30)
    assert finished(watched)["status"] == "cancelled"
    assert [e.data["seq"] for e in watched] == list(range(1, len(watched) + 1))

    # Replica 1 dies mid-run: the run fails within about the lock's TTL, everywhere.
    llm.script(code_reply(LOOP), final_reply("'never'"))
    run_id, watcher, watched = start_and_watch(one, two, session["id"], "Loop until it dies")
    first.kill()
    watcher.join(LOCK_TTL_SECONDS * 10)  # a generous bound: CI machines are busy
    end = finished(watched)
    assert end["status"] == "failed" and end["error"] == INTERRUPTED
    run = three.get(f"/runs/{run_id}").json()
    assert run["status"] == "failed" and run["error"] == INTERRUPTED

    # The session goes on from replica 2, with the variables of its last finished question.
    llm.script(code_reply("print(totals['North'])"), final_reply("'2510.75'"))
    events = ask(two, session["id"], "And North's total?")
    assert finished(events)["status"] == "succeeded"
    outputs = [e.data["output"] for e in events if e.event == "step.output"]
    assert outputs and outputs[0].strip() == "2510.75"
    system = llm.requests[-2]["messages"][0]["content"]
    assert "df (DataFrame, 4 rows, 2 columns), totals (Series, 2 values)" in system
    history = two.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert [r["status"] for r in history] == ["succeeded", "cancelled", "failed", "succeeded"]
    # Replica 2 gave the session the project's file (read-only, by link).
    assert project_file(second.env["DATA_DIR"], session["id"], "sales.csv") == SALES

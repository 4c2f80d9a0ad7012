"""The three ways analysis code can be placed: refused, limits only, or the sandbox service.

- With isolation required and impossible, questions answer 503 with the cause and its fix,
  while everything else (projects, files, sessions, readiness) keeps working.
- SANDBOX_ISOLATION=none runs code, and says everywhere that it is not isolated.
- SANDBOX_SERVICE_SOCKET sends the workers to a separate service process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import SALES
from tests.api.test_query import ask, finished, of
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, LLM_KEY, Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sandbox_service import SandboxServiceProcess
from tests.support.server import LiveServer
from tests.support.sse import Event, read_events


def start_server(data_dir: Path, llm: ScriptedLLM, **overrides: Any) -> LiveServer:
    settings = stack_settings("embedded", data_dir, LLM_API_BASE=llm.api_base, **overrides)
    return LiveServer(settings).start()


@pytest.fixture
def admin_of() -> Iterator[Any]:
    clients: list[Api] = []

    def login(live: LiveServer) -> Api:
        with Api(live) as anon:
            client = anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        clients.append(client)
        return client

    yield login
    for client in clients:
        client.close()


def new_session(api: Api) -> dict[str, Any]:
    project = api.project()
    assert api.upload(project["id"], "sales data.csv", SALES).status_code == 201
    response = api.post(f"/projects/{project['id']}/sessions", json={"title": "Sales"})
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_without_a_working_sandbox_questions_are_refused_with_the_cause(
    tmp_path: Path, llm: ScriptedLLM, admin_of: Any
) -> None:
    # A "bwrap" that always fails: what a host without user namespaces looks like.
    live = start_server(tmp_path, llm, SANDBOX_BWRAP="/bin/false")
    try:
        api = admin_of(live)
        status = api.get("/sandbox").json()
        assert (status["available"], status["isolated"], status["mechanism"]) == (
            False,
            False,
            None,
        )
        assert "bubblewrap" in status["detail"] and status["fix"]

        session = new_session(api)  # files and sessions work as ever
        llm.script(code_reply("print('never runs')"), final_reply("'no'"))
        refused = api.post(f"/sessions/{session['id']}/query", json={"query": "Total?"})
        assert refused.status_code == 503
        body = refused.json()
        assert body["code"] == "sandbox_unavailable"
        assert body["detail"].startswith("Analysis is disabled: ")
        assert status["fix"] in body["detail"]
        assert int(refused.headers["Retry-After"]) > 0
        assert llm.requests == []  # nothing was asked of the model
        runs = api.get(f"/sessions/{session['id']}/runs").json()
        assert runs["total"] == 0

        ready = httpx.get(f"{live.url}/readyz")
        assert ready.status_code == 200
        assert ready.json()["sandbox"]["available"] is False
    finally:
        live.stop()


def test_isolation_none_runs_code_and_says_it_is_not_isolated(
    tmp_path: Path, llm: ScriptedLLM, admin_of: Any
) -> None:
    live = start_server(tmp_path, llm, SANDBOX_ISOLATION="none")
    try:
        api = admin_of(live)
        status = api.get("/sandbox").json()
        assert (status["available"], status["isolated"], status["mechanism"]) == (
            True,
            False,
            "rlimits",
        )
        assert "NOT isolated" in status["detail"]
        assert httpx.get(f"{live.url}/readyz").json()["sandbox"]["isolated"] is False

        session = new_session(api)
        llm.script(
            code_reply(
                "import pandas as pd\nprint(pd.read_csv('sales data.csv')['revenue'].sum())"
            ),
            final_reply("'4490.75'"),
        )
        events = ask(api, session["id"], "Total revenue?")
        assert finished(events)["status"] == "succeeded"
        assert "4490.75" in of(events, "step.output")[0]["output"]
    finally:
        live.stop()


def test_through_the_sandbox_service_a_question_is_answered_with_its_chart(
    tmp_path: Path, llm: ScriptedLLM, admin_of: Any
) -> None:
    data_dir = tmp_path / "data"
    service = SandboxServiceProcess(tmp_path / "service").start()
    # The service shares only the workspaces with the backend, as in docker compose.
    service_workspaces = service.workspaces
    (data_dir).mkdir()
    (data_dir / "workspaces").symlink_to(service_workspaces, target_is_directory=True)
    live = start_server(data_dir, llm, SANDBOX_SERVICE_SOCKET=str(service.socket))
    try:
        api = admin_of(live)
        status = api.get("/sandbox").json()
        assert (status["location"], status["mechanism"], status["available"]) == (
            "service",
            "bubblewrap",
            True,
        )
        session = new_session(api)
        llm.script(
            code_reply(
                "import pandas as pd\nimport plotly.express as px\n"
                "df = pd.read_csv('sales data.csv')\n"
                "print(df['revenue'].sum())\n"
                "px.bar(df, x='region', y='revenue').show()"
            ),
            final_reply("'4490.75 in all.'"),
        )
        events = ask(api, session["id"], "Total revenue, as a chart?")
        assert finished(events)["status"] == "succeeded"
        assert "4490.75" in of(events, "step.output")[0]["output"]
        (chart,) = [a["artifact"] for a in of(events, "artifact")]
        assert chart["kind"] == "plotly"
        content = api.get(f"/artifacts/{chart['id']}/content")
        assert content.status_code == 200 and content.json()["data"][0]["type"] == "bar"

        # The service's own environment carries none of the backend's secrets.
        assert service.process is not None
        environ = Path(f"/proc/{service.process.pid}/environ").read_bytes()
        assert LLM_KEY.encode() not in environ
        assert b"SECRET_KEY" not in environ and b"LLM_" not in environ
    finally:
        live.stop()
        service.stop()


def test_a_sandbox_service_gone_mid_session_ends_the_run_with_the_cause(
    tmp_path: Path, llm: ScriptedLLM, admin_of: Any
) -> None:
    data_dir = tmp_path / "data"
    service = SandboxServiceProcess(tmp_path / "service").start()
    data_dir.mkdir()
    (data_dir / "workspaces").symlink_to(service.workspaces, target_is_directory=True)
    live = start_server(data_dir, llm, SANDBOX_SERVICE_SOCKET=str(service.socket))
    try:
        api = admin_of(live)
        session = new_session(api)
        llm.script(code_reply("print(40 + 2)"), final_reply("'42'"))
        assert finished(ask(api, session["id"], "Warm up"))["status"] == "succeeded"

        # The service goes away while a step runs (its workers go with it).
        llm.script(
            code_reply("import time\ntime.sleep(30)"),
            code_reply("print(1)"),
            code_reply("print(2)"),
            final_reply("'no'"),
        )
        with api.stream(
            "POST", f"/sessions/{session['id']}/query", json={"query": "And now?"}
        ) as response:
            assert response.status_code == 200
            events: list[Event] = []
            for event in read_events(response):
                if event is None:
                    continue
                events.append(event)
                if event.event == "step.code" and len(events) < 10:
                    service.stop()
                if event.event == "run.finished":
                    break
        end = finished(events)
        assert end["status"] == "failed"
        assert end["error"].startswith("Analysis is disabled: "), end["error"]
        assert "sandbox service" in end["error"]
        lost = [e.data["error"] for e in events if e.event == "step.error"]
        assert lost and "sandbox service" in lost[0], lost
        # The run stopped at the step after the outage: no more model calls.
        assert len(llm.requests) == 2
    finally:
        live.stop()
        service.stop()

"""Asking questions, end to end: the real API, the real sandbox, a scripted LLM over HTTP.

Each test scripts what the model says, asks through POST /sessions/{id}/query, and checks
what a user would see: the event stream, the stored run, the artifacts, the answers.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import httpx
import pytest

from tests.conftest import LLM_KEY, WAIT_FOR_GO, Api, release
from tests.support.llm import HttpError, ScriptedLLM, Silence, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, collect, read_events, read_into

READ = "import pandas as pd\ndf = pd.read_csv('sales data.csv')"
BACKEND_SECRET = "backend-secret-value-7f3a9c"


def ask(api: Api, session_id: str, query: str, **body: Any) -> list[Event]:
    with api.stream(
        "POST", f"/sessions/{session_id}/query", json={"query": query, **body}
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return collect(response)


def names(events: list[Event]) -> list[str]:
    return [e.event for e in events]


def of(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.event == name]


def finished(events: list[Event]) -> dict[str, Any]:
    assert events[-1].event == "run.finished", names(events)
    return events[-1].data


def test_a_question_streams_steps_and_a_correct_answer(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(
            f"{READ}\nprint(df.groupby('region')['revenue'].sum())", "Sum revenue by region."
        ),
        final_reply("'North sold 2510.75, South 1980.0.'"),
    )
    events = ask(alice, session["id"], "Which region sells more?")

    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert all(e.data["seq"] == e.id for e in events)
    run_id = events[0].data["run_id"]
    assert events[0].event == "run.started"
    assert (
        events[0].data["query"] == "Which region sells more?"
        and events[0].data["model"] == "openai/scripted"
    )
    # The session's first question starts its sandbox, and says so before the agent works.
    assert names(events)[1:3] == ["sandbox.starting", "step.started"]
    assert events[1].data["restoring"] is False
    assert of(events, "step.code")[0]["code"].startswith("import pandas as pd")
    assert "North    2510.75" in of(events, "step.output")[0]["output"]
    streamed = "".join(d["text"] for d in of(events, "model.delta") if d["step"] == 1)
    assert "Sum revenue by region." in streamed and "<code>" in streamed
    assert of(events, "final") == [
        {"run_id": run_id, "seq": events[-2].id, "answer": "North sold 2510.75, South 1980.0."}
    ]
    end = finished(events)
    assert end["status"] == "succeeded" and end["error"] is None
    assert end["tokens_in"] > 0 and end["tokens_out"] > 0

    run = alice.get(f"/runs/{run_id}").json()
    assert (
        run["status"] == "succeeded" and run["final_answer"] == "North sold 2510.75, South 1980.0."
    )
    assert [s["index"] for s in run["steps"]] == [1, 2]
    assert run["steps"][0]["thought"] == "Sum revenue by region."
    assert "2510.75" in run["steps"][0]["output"]
    assert run["tokens_in"] == end["tokens_in"] == sum(s["tokens_in"] for s in run["steps"])
    assert run["finished_at"] is not None
    assert [r["id"] for r in alice.get(f"/sessions/{session['id']}/runs").json()["items"]] == [
        run_id
    ]

    system = llm.requests[0]["messages"][0]["content"]
    assert "sales data.csv" in system and "revenue float64" in system and "4 rows" in system
    # The model reads step 1's code back once, in its own reply, not again as a tool call.
    second = llm.prompts()[1]
    assert second.count("print(df.groupby('region')['revenue'].sum())") == 1, second
    assert "Calling tools" not in second and "North    2510.75" in second


def test_an_error_in_step_one_is_fixed_in_step_two(alice: Api, session, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(f"{READ}\nprint(df['revenu'].sum())"),
        code_reply("print(df['revenue'].sum())"),
        final_reply("'Total revenue is 4490.75.'"),
    )
    events = ask(alice, session["id"], "Total revenue?")
    errors = of(events, "step.error")
    assert len(errors) == 1 and errors[0]["step"] == 1 and "revenu" in errors[0]["error"]
    assert "KeyError" in errors[0]["error"]
    assert "KeyError" in llm.prompts()[1]  # the model was shown the error
    assert "4490.75" in of(events, "step.output")[-1]["output"]
    assert finished(events)["status"] == "succeeded"
    assert of(events, "final")[0]["answer"] == "Total revenue is 4490.75."


def test_charts_tables_and_files_become_artifacts(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(
            f"{READ}\nimport plotly.express as px\nimport matplotlib.pyplot as plt\n"
            "totals = df.groupby('region', as_index=False)['revenue'].sum()\n"
            "fig = px.bar(totals, x='region', y='revenue')\nfig.show()\n"
            "plt.plot([1, 2, 3], [3, 1, 2])\nplt.show()\n"
            "display(totals)\ntotals.to_csv('totals.csv', index=False)"
        ),
        final_reply("'Done.'"),
    )
    events = ask(alice, session["id"], "Chart revenue by region and save the totals.")
    assert finished(events)["status"] == "succeeded"
    artifacts = [d["artifact"] for d in of(events, "artifact")]
    by_kind = {a["kind"]: a for a in artifacts}
    assert {"plotly", "image", "table", "file"} <= set(by_kind)

    figure = alice.get(by_kind["plotly"]["url"].removeprefix("/api/v1")).json()
    assert figure["data"][0]["type"] == "bar"
    png = alice.get(by_kind["image"]["url"].removeprefix("/api/v1"))
    assert png.content.startswith(b"\x89PNG") and png.headers["content-type"] == "image/png"
    table = alice.get(by_kind["table"]["url"].removeprefix("/api/v1")).json()
    assert table["columns"] == ["region", "revenue"] and table["row_count"] == 2
    assert table["rows"] == [["North", 2510.75], ["South", 1980.0]]
    written = [a for a in artifacts if a["name"] == "totals.csv"]
    assert written and alice.get(written[0]["url"].removeprefix("/api/v1")).content == (
        b"region,revenue\nNorth,2510.75\nSouth,1980.0\n"
    )
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert {a["id"] for a in run["artifacts"]} == {a["id"] for a in artifacts}
    listed = alice.get(f"/sessions/{session['id']}/artifacts").json()
    assert {a["id"] for a in listed["items"]} == {a["id"] for a in artifacts}
    workspace = live.settings.DATA_DIR / "workspaces" / session["id"]
    assert (workspace / "totals.csv").exists()  # the code's own file stays for later questions
    assert [
        p for p in (workspace / ".workbench").rglob("*") if p.is_file() and "artifacts" in p.parts
    ] == []


def test_a_follow_up_uses_the_previous_runs_variables(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(f"{READ}\ntotals = df.groupby('region')['revenue'].sum()\nprint(totals)"),
        final_reply("'North leads.'"),
    )
    assert finished(ask(alice, session["id"], "Revenue by region?"))["status"] == "succeeded"
    llm.script(
        code_reply("print(round(totals['North'] / totals.sum(), 3))"), final_reply("'55.9%'")
    )
    events = ask(alice, session["id"], "What share is North's?")
    assert "sandbox.starting" not in names(events)  # its worker is still there
    assert of(events, "step.output")[0]["output"].strip() == "0.559"
    assert finished(events)["status"] == "succeeded"
    system = llm.requests[0]["messages"][0]["content"]
    assert "Revenue by region?" in system and "North leads." in system
    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert [r["query"] for r in runs] == ["Revenue by region?", "What share is North's?"]


def _start_in_background(
    api: Api, session_id: str, query: str
) -> tuple[threading.Thread, list[Event]]:
    seen: list[Event] = []

    def read() -> None:
        with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
            read_into(response, seen)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, seen


def _wait_for(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_cancel_stops_a_running_step(  # type: ignore[no-untyped-def]
    alice: Api, session, llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    llm.script(
        code_reply("import time\nprint('working')\ntime.sleep(3600)\nprint('never')"),
        final_reply("'x'"),
    )
    thread, seen = _start_in_background(alice, session["id"], "Slow question")
    _wait_for(lambda: any(e.event == "step.code" for e in seen))
    run_id = seen[0].data["run_id"]
    cancelled = alice.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    thread.join(30)
    end = finished(seen)
    assert end["status"] == "cancelled" and end["error"] == "Stopped by the user."
    # Stopped by the cancel, not by the step's time limit (ten minutes here): the cancel did
    # not wait for the step.
    assert [e["error"] for e in of(seen, "step.error")] == ["Stopped by the user."]
    assert not any("never" in d["output"] for d in of(seen, "step.output"))
    assert alice.post(f"/runs/{run_id}/cancel").json()["code"] == "run_not_active"
    llm.script(final_reply("'still works'"))
    assert finished(ask(alice, session["id"], "Again?"))["status"] == "succeeded"


def test_a_busy_session_answers_409_at_once(  # type: ignore[no-untyped-def]
    alice: Api, session, llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    llm.script(code_reply(WAIT_FOR_GO), final_reply("'done'"))
    thread, seen = _start_in_background(alice, session["id"], "First")
    _wait_for(lambda: any(e.event == "step.code" for e in seen))
    # The first run cannot end before go.csv is there: a second question that waited for
    # it would never be answered.
    busy = alice.post(f"/sessions/{session['id']}/query", json={"query": "Second"})
    assert busy.status_code == 409 and busy.json()["code"] == "session_busy"
    for path in (f"/sessions/{session['id']}", f"/projects/{session['project_id']}"):
        refused = alice.delete(path)  # nothing is deleted from under a running question
        assert refused.status_code == 409 and refused.json()["code"] == "session_busy", path
    release(long_steps, session)
    thread.join(30)
    assert finished(seen)["status"] == "succeeded"
    assert "released" in of(seen, "step.output")[0]["output"]
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204


def test_disconnect_then_reattach_loses_and_repeats_nothing(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply("import time\nfor i in range(3):\n    print(i)\n    time.sleep(0.3)"),
        code_reply("print('second step')"),
        final_reply("'done'"),
    )
    llm.chunk_delay = 0.01
    first: list[Event] = []
    with alice.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Long one"}
    ) as response:
        for event in read_events(response):
            if event is not None:
                first.append(event)
            if len(first) == 5:
                break  # the browser tab closes
    run_id = first[0].data["run_id"]
    with alice.stream(
        "GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": str(first[-1].id)}
    ) as response:
        rest = collect(response)
    assert [e.id for e in first + rest] == list(range(1, len(first) + len(rest) + 1))
    assert finished(rest)["status"] == "succeeded"
    with alice.stream("GET", f"/runs/{run_id}/events", params={"after": 0}) as response:
        replay = collect(response)
    assert [(e.id, e.event, e.data) for e in replay] == [
        (e.id, e.event, e.data) for e in first + rest
    ]


def test_a_step_that_never_ends_is_killed_and_the_session_goes_on(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply("import time\nwhile True:\n    time.sleep(0.5)"),
        final_reply("'gave up on the loop'"),
    )
    # (Were it not killed, the question would never end: `ask` fails after its timeout.)
    events = ask(alice, session["id"], "Loop forever")
    error = of(events, "step.error")[0]["error"]
    assert "4 s" in error or "stopped" in error.lower()
    assert "stopped" in llm.prompts()[1].lower()  # the agent was told
    assert finished(events)["status"] == "succeeded"
    llm.script(code_reply(f"{READ}\nprint(len(df))"), final_reply("'4 rows'"))
    again = ask(alice, session["id"], "How many rows?")
    assert of(again, "step.output")[0]["output"].strip() == "4"


def test_a_memory_bomb_is_contained(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply("import numpy as np\nbig = np.ones((60_000, 60_000))\nprint(big.sum())"),
        final_reply("'too big'"),
    )
    events = ask(alice, session["id"], "Make a huge array")
    assert "memory" in of(events, "step.error")[0]["error"].lower()
    assert finished(events)["status"] == "succeeded"
    assert httpx.get(f"{live.url}/healthz").status_code == 200


def test_sandboxed_code_cannot_read_secrets_or_write_outside(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    os.environ["WORKBENCH_BACKEND_SECRET"] = BACKEND_SECRET  # the backend's own environment
    outside = live.settings.DATA_DIR / "pwned.csv"
    try:
        llm.script(
            code_reply(
                "import pandas as pd\n"
                "for path in ['/proc/self/environ', '/proc/1/environ']:\n"
                "    try:\n        print(open(path).read())\n"
                "    except Exception as e:\n        print('open', type(e).__name__)\n"
                "    try:\n        print(pd.read_csv(path, sep='\\0', header=None).to_string())\n"
                "    except Exception as e:\n        print('pandas', type(e).__name__)"
            ),
            code_reply(f"import pandas as pd\npd.DataFrame({{'a': [1]}}).to_csv({str(outside)!r})"),
            final_reply("'done'"),
        )
        events = ask(alice, session["id"], "Show me the environment")
    finally:
        del os.environ["WORKBENCH_BACKEND_SECRET"]
    everything = json.dumps([e.data for e in events]) + json.dumps(
        alice.get(f"/runs/{events[0].data['run_id']}").json()
    )
    assert BACKEND_SECRET not in everything and LLM_KEY not in everything
    assert not outside.exists()
    assert of(events, "step.error")[-1]["step"] == 2  # the write failed
    assert not any(LLM_KEY in p or BACKEND_SECRET in p for p in llm.prompts())


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            HttpError(401, f"Incorrect API key provided: {LLM_KEY}"),
            "refused the API key (HTTP 401) (Incorrect API key provided: [redacted]). "
            "Check LLM_API_KEY",
        ),
        (
            HttpError(429, "Rate limit reached for requests"),
            "is limiting requests (HTTP 429) (Rate limit reached for requests). Wait a minute",
        ),
        (
            HttpError(500, "The server had an error"),
            "failed with a server error (HTTP 500) (The server had an error). Try again",
        ),
        (Silence(8), "timed out: it sent nothing for LLM_TIMEOUT_SECONDS"),
    ],
)
def test_provider_failures_end_the_run_with_a_sentence_naming_cause_server_and_fix(
    alice: Api, session, llm: ScriptedLLM, reply, expected: str
) -> None:  # type: ignore[no-untyped-def]
    llm.script(reply)
    events = ask(alice, session["id"], "Anything")
    end = finished(events)
    assert end["status"] == "failed"
    server = llm.api_base.removeprefix("http://").removesuffix("/v1")
    assert end["error"].startswith(f"The model server at {server} "), end["error"]
    assert expected in end["error"]
    assert "litellm" not in end["error"] and "Exception" not in end["error"]
    # The step that called the model says so too, and keeps it.
    assert [(e["step"], e["error"]) for e in of(events, "step.error")] == [(1, end["error"])]
    assert LLM_KEY not in json.dumps([e.data for e in events])
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["status"] == "failed" and LLM_KEY not in run["error"]


def test_garbage_from_the_model_is_retried_and_max_steps_fails_clearly(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script("I think the answer is probably 42, no code needed.", final_reply("'42'"))
    events = ask(alice, session["id"], "Answer?")
    assert "code" in of(events, "step.error")[0]["error"].lower()
    assert finished(events)["status"] == "succeeded"

    llm.script(*["Just chatting, no code."] * 6)
    events = ask(alice, session["id"], "Answer properly?")
    end = finished(events)
    assert end["status"] == "failed" and "all 4 steps" in end["error"]
    assert len(of(events, "step.finished")) == 4  # the last step is not repeated
    assert len(llm.requests) == 4  # no extra free-form call for an answer


def test_models_and_bad_query_bodies(alice: Api, session, bob: Api) -> None:  # type: ignore[no-untyped-def]
    models = alice.get("/models").json()["items"]
    assert models == [
        {"id": "openai/scripted", "label": "scripted", "default": True},
        {"id": "openai/gpt-4o-mini", "label": "gpt-4o-mini", "default": False},
    ]
    unknown = alice.post(
        f"/sessions/{session['id']}/query", json={"query": "q", "model": "openai/gpt-99"}
    )
    assert unknown.status_code == 400 and unknown.json()["code"] == "unknown_model"
    bad_file = alice.post(
        f"/sessions/{session['id']}/query",
        json={"query": "q", "file_ids": ["00000000-0000-0000-0000-000000000000"]},
    )
    assert bad_file.status_code == 400 and bad_file.json()["code"] == "unknown_file"
    assert alice.post(f"/sessions/{session['id']}/query", json={"query": ""}).status_code == 422
    assert bob.post(f"/sessions/{session['id']}/query", json={"query": "q"}).status_code == 404


def test_another_users_run_is_not_found(alice: Api, bob: Api, session, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    llm.script(final_reply("'hi'"))
    run_id = ask(alice, session["id"], "Hello")[0].data["run_id"]
    for method, path in [("GET", ""), ("GET", "/events"), ("POST", "/cancel"), ("POST", "/input")]:
        response = bob.request(
            method, f"/runs/{run_id}{path}", json={"answer": "x"} if path == "/input" else None
        )
        assert response.status_code == 404, path
    answer = alice.post(f"/runs/{run_id}/input", json={"answer": "x"})
    assert answer.status_code == 409 and answer.json()["code"] == "not_waiting_input"


def test_runs_left_running_by_a_dead_process_are_failed_and_their_streams_end(
    alice: Api, session, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    import uuid

    from app.models import Run
    from app.runs.events import RunStarted, record

    async def orphan() -> str:
        """A run as a replica that died mid-run leaves it: active, its live log begun."""
        async with live.state.session_factory() as db:
            run = Run(
                session_id=uuid.UUID(session["id"]),
                status="running",
                query="lost",
                model="openai/scripted",
            )
            db.add(run)
            await db.commit()
        started = RunStarted(session_id=run.session_id, model=run.model, query=run.query)
        await live.state.events.append(str(run.id), record(run.id, 1, started))
        return str(run.id)

    run_id = live.call(orphan())
    seen: list[Event] = []

    def follow() -> None:
        with alice.stream("GET", f"/runs/{run_id}/events") as response:
            seen.extend(collect(response))

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    # On start-up and every sixth of the lock TTL on any replica; called here to not wait.
    live.call(live.state.runs.recover_interrupted_runs())
    follower.join(20)
    assert names(seen) == ["run.started", "run.finished"]  # the live stream ended too
    assert finished(seen)["status"] == "failed" and finished(seen)["seq"] == 2
    run = alice.get(f"/runs/{run_id}").json()
    assert run["status"] == "failed" and "the server running it stopped" in run["error"]
    with alice.stream("GET", f"/runs/{run_id}/events", params={"after": 1}) as response:
        events = collect(response)
    assert finished(events)["status"] == "failed"
    again = alice.post(f"/sessions/{session['id']}/query", json={"query": "x"})
    assert again.status_code == 200  # the session is not left locked


def test_an_unreachable_llm_server_fails_the_run_clearly(tmp_path, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, reset_state, stack_settings
    from tests.support.services import free_port

    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    live = LiveServer(stack_settings("embedded", tmp_path, LLM_API_BASE=dead)).start()
    try:
        live.call(reset_state(live))
        with Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
            project = admin.project()
            session = admin.post(f"/projects/{project['id']}/sessions", json={}).json()
            events = ask(admin, session["id"], "Anyone there?")
            end = finished(events)
            assert end["status"] == "failed"
            host = dead.removeprefix("http://").removesuffix("/v1")
            assert end["error"] == (
                f"Could not reach the model server at {host} (connection refused). Check "
                "that it is running and that LLM_API_BASE points at it."
            )
            assert LLM_KEY not in end["error"]
    finally:
        live.stop()


def test_cost_comes_from_litellms_price_list_for_a_known_model(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    import litellm

    llm.script(code_reply("print(6 * 7)"), final_reply("'42'"))
    events = ask(alice, session["id"], "Six times seven?", model="openai/gpt-4o-mini")
    end = finished(events)
    assert events[0].data["model"] == "openai/gpt-4o-mini"
    prompt, completion = litellm.cost_per_token(
        model="openai/gpt-4o-mini",
        prompt_tokens=end["tokens_in"],
        completion_tokens=end["tokens_out"],
    )
    assert end["cost_usd"] == pytest.approx(prompt + completion) and end["cost_usd"] > 0
    assert alice.get(f"/runs/{events[0].data['run_id']}").json()["cost_usd"] == pytest.approx(
        end["cost_usd"]
    )
    llm.script(final_reply("'ok'"))
    assert (
        finished(ask(alice, session["id"], "And with the default?"))["cost_usd"] is None
    )  # unknown price

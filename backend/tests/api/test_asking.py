"""The agent asks the user (ask_user), the run waits holding nothing, an answer from any
app instance resumes it: the real API and sandbox, the scripted LLM over HTTP."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path

from tests.api.conftest import SALES
from tests.api.test_plans_and_checks import agent_settings
from tests.api.test_query import READ, finished, names, of
from tests.conftest import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    Api,
    reset_state,
    stack_settings,
)
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, collect, read_events, until
from tests.support.workspaces import project_file

ASK = code_reply(f"{READ}\nkind = ask_user('Net or gross revenue?')", "Revenue is ambiguous.")


def ask_until_waiting(api: Api, session_id: str, query: str) -> list[Event]:
    """Ask, and read the stream until the run waits for the user (then leave it)."""
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
        assert response.status_code == 200, response.read()
        return until(response, "input.requested")


def follow(api: Api, run_id: str, after: int) -> list[Event]:
    with api.stream("GET", f"/runs/{run_id}/events", params={"after": after}) as response:
        return collect(response)


def agent_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("agent-")]


def test_a_run_asks_waits_holding_nothing_and_goes_on_with_the_answer(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        ASK,
        code_reply("print(kind, df['revenue'].sum())"),
        final_reply("f'Total {kind} revenue is 4490.75.'"),
    )
    events = ask_until_waiting(alice, session["id"], "What is the revenue?")
    asked = events[-1]
    assert asked.event == "input.requested", names(events)
    assert asked.data["question"] == "Net or gross revenue?" and asked.data["step"] == 1
    run_id = asked.data["run_id"]

    run = alice.get(f"/runs/{run_id}").json()
    assert run["status"] == "waiting_input"
    assert run["pending"] == {
        "kind": "input",
        "step": 1,
        "question": "Net or gross revenue?",
        "code": None,
    }
    assert [s["index"] for s in run["steps"]] == [1]
    # Waiting holds no lock, no agent thread (and so no worker or connection).
    assert live.call(live.state.locks.holder(session["id"])) is None
    assert agent_threads() == []
    # The session says it waits: another question is refused until this one is answered.
    busy = alice.post(f"/sessions/{session['id']}/query", json={"query": "Something else?"})
    assert busy.status_code == 409 and busy.json()["code"] == "session_busy"
    assert "waiting for your answer" in busy.json()["detail"]

    time.sleep(1.5)  # the user takes a moment: the run's duration includes the wait
    answered = alice.post(f"/runs/{run_id}/input", json={"answer": "gross"})
    assert answered.status_code == 200, answered.text
    assert answered.json()["status"] in ("running", "queued")
    assert answered.json()["inputs"] == [
        {"step": 1, "question": "Net or gross revenue?", "answer": "gross"}
    ]
    rest = follow(alice, run_id, asked.id)
    assert rest[0].event == "input.received" and rest[0].data["answer"] == "gross"
    assert rest[0].id == asked.id + 1  # one numbering across the wait
    end = finished(rest)
    assert end["status"] == "succeeded"
    # The answer is ask_user's value in the code, and the model read it.
    assert "gross 4490.75" in of(rest, "step.output")[-1]["output"]
    assert "ask_user returned the user's answer: 'gross'" in str(llm.requests[1]["messages"])
    # The step that asked went on (without asking the model again), then two more.
    assert [d["step"] for d in of(rest, "step.finished")] == [1, 2, 3]
    assert len(llm.requests) == 3
    assert of(rest, "final")[0]["answer"] == "Total gross revenue is 4490.75."

    run = alice.get(f"/runs/{run_id}").json()
    assert run["status"] == "succeeded" and run["pending"] is None
    # The live duration and the stored times tell the same story, the wait included.
    wall = datetime.fromisoformat(run["finished_at"]) - datetime.fromisoformat(run["started_at"])
    assert end["duration_ms"] >= 1500 and end["duration_ms"] >= wall.total_seconds() * 1000 - 500
    assert run["inputs"] == [{"step": 1, "question": "Net or gross revenue?", "answer": "gross"}]
    assert [s["index"] for s in run["steps"]] == [1, 2, 3]
    # Replaying the whole run shows the question, the answer and the end, in order.
    replay = follow(alice, run_id, 0)
    order = names(replay)
    assert order.index("input.requested") < order.index("input.received") < order.index("final")
    assert order.count("run.started") == 1

    again = alice.post(f"/runs/{run_id}/input", json={"answer": "net"})
    assert again.status_code == 409 and again.json()["code"] == "not_waiting_input"


def test_the_code_after_the_question_runs_with_the_answer_in_the_same_step(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    """The README's promise: the answer is what ask_user returns, wherever the call stands
    in the step; the code after it runs, and what it defines exists afterwards."""
    asking = (
        f"{READ}\nprint('rows:', len(df))\n"
        "choice = ask_user('Net or gross?')\n"
        "share = 1.0 if choice == 'gross' else 0.8\n"
        "total = round(df['revenue'].sum() * share, 2)\n"
        "print(choice, total)"
    )
    llm.script(code_reply(asking), code_reply("final_answer(f'{choice}: {total}')"))
    asked = ask_until_waiting(alice, session["id"], "Revenue?")[-1]
    run_id = asked.data["run_id"]
    waiting = alice.get(f"/runs/{run_id}").json()
    # Kept as far as it ran: what it printed before it asked.
    assert [s["output"] for s in waiting["steps"]] == ["rows: 4\n"]

    assert alice.post(f"/runs/{run_id}/input", json={"answer": "gross"}).status_code == 200
    rest = follow(alice, run_id, asked.id)
    assert finished(rest)["status"] == "succeeded", of(rest, "step.error")
    assert of(rest, "final")[0]["answer"] == "gross: 4490.75"
    assert not of(rest, "step.error")
    run = alice.get(f"/runs/{run_id}").json()
    assert [s["index"] for s in run["steps"]] == [1, 2]
    first = run["steps"][0]
    assert first["code"] == asking  # the step as the model wrote it, run once in all
    assert first["output"].count("rows: 4") == 1
    assert "(ask_user returned the user's answer: 'gross')" in first["output"]
    assert first["output"].rstrip().endswith("gross 4490.75")
    assert first["error"] is None


def test_a_file_read_before_and_after_the_answer_is_read_once_by_the_run(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        ASK,
        code_reply(f"{READ}\nprint(kind, len(df))"),
        final_reply("'Done.'"),
    )
    asked = ask_until_waiting(alice, session["id"], "Revenue?")[-1]
    run_id = asked.data["run_id"]
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "net"}).status_code == 200
    end = finished(follow(alice, run_id, asked.id))
    assert end["status"] == "succeeded", end

    run = alice.get(f"/runs/{run_id}").json()
    assert [(f["name"], f["read"]) for f in run["files"]] == [("sales data.csv", True)]
    file_id = run["files"][0]["file_id"]
    version = alice.get(f"/files/{file_id}/versions").json()[0]
    assert [r["query"] for r in version["read_by"]] == ["Revenue?"]
    assert version["read_by_total"] == 1


def test_a_step_that_asks_twice_gets_each_answer_in_turn(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    asking = (
        "kept = []\n"
        "for region in ['North', 'South']:\n"
        "    kept.append(region + '=' + ask_user(f'Include {region}?'))\n"
        "print(kept)"
    )
    llm.script(code_reply(asking), final_reply("str(kept)"))
    first = ask_until_waiting(alice, session["id"], "Which regions?")[-1]
    assert first.data["question"] == "Include North?"
    run_id = first.data["run_id"]
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "yes"}).status_code == 200
    with alice.stream("GET", f"/runs/{run_id}/events", params={"after": first.id}) as response:
        second = until(response, "input.requested")[-1]
    assert second.event == "input.requested", second
    assert second.data["question"] == "Include South?" and second.data["step"] == 1
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "no"}).status_code == 200
    rest = follow(alice, run_id, second.id)
    assert finished(rest)["status"] == "succeeded"
    assert of(rest, "final")[0]["answer"] == "['North=yes', 'South=no']"
    run = alice.get(f"/runs/{run_id}").json()
    assert [(i["question"], i["answer"]) for i in run["inputs"]] == [
        ("Include North?", "yes"),
        ("Include South?", "no"),
    ]
    assert len(llm.requests) == 2  # the step went on twice without asking the model


def test_an_answer_is_checked_and_only_the_owner_may_give_it(
    alice: Api, bob: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(code_reply("ask_user('Which year?')"), final_reply("'2025 it is.'"))
    run_id = ask_until_waiting(alice, session["id"], "Sales by year?")[-1].data["run_id"]
    assert alice.post(f"/runs/{run_id}/input", json={"answer": ""}).status_code == 422
    assert bob.post(f"/runs/{run_id}/input", json={"answer": "2025"}).status_code == 404
    assert alice.get(f"/runs/{run_id}").json()["status"] == "waiting_input"
    # A question asked without keeping its value still gets its answer to the model.
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "2025"}).status_code == 200
    end = finished(follow(alice, run_id, 0))
    assert end["status"] == "succeeded"
    assert "ask_user returned the user's answer: '2025'" in str(llm.requests[1]["messages"])


def test_stopping_a_waiting_run_frees_the_session(alice: Api, session, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    llm.script(ASK, final_reply("'ok'"))
    with alice.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Revenue?"}
    ) as response:
        stream = read_events(response)
        seen = []
        for event in stream:
            if event is not None:
                seen.append(event)
                if event.event == "input.requested":
                    break
        run_id = seen[-1].data["run_id"]
        stopped = alice.post(f"/runs/{run_id}/cancel")
        assert stopped.status_code == 200 and stopped.json()["status"] == "cancelled"
        # The stream that waited ends with run.finished.
        rest = [e for e in stream if e is not None]
        assert rest[-1].event == "run.finished" and rest[-1].data["status"] == "cancelled"
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "net"}).status_code == 409
    llm.script(final_reply("'free again'"))
    with alice.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Next?"}
    ) as response:
        assert finished(collect(response))["status"] == "succeeded"


def test_a_run_nobody_answers_fails_after_the_input_timeout(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(ASK)
    with agent_settings(live, RUN_INPUT_TIMEOUT_SECONDS=0.5):
        asked = ask_until_waiting(alice, session["id"], "Revenue?")[-1]
        run_id = asked.data["run_id"]
        # The sweeper (every replica runs it) ends the run once the time is up.
        end = finished(follow(alice, run_id, asked.id))
    assert end["status"] == "failed"
    assert end["error"] == (
        "Nobody answered the agent's question within 0.5 seconds, so the run was stopped. "
        "Ask again."
    )
    run = alice.get(f"/runs/{run_id}").json()
    assert run["status"] == "failed" and run["pending"] is None
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "net"}).status_code == 409


def test_twenty_waiting_runs_hold_nothing_while_the_server_answers_others(
    alice: Api, llm: ScriptedLLM, live: LiveServer
) -> None:
    project = alice.project()
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    sessions = [
        alice.post(f"/projects/{project['id']}/sessions", json={"title": f"S{i}"}).json()
        for i in range(21)
    ]
    llm.script(*[code_reply("choice = ask_user('Which region?')")] * 20)
    waiting = [
        ask_until_waiting(alice, s["id"], "Revenue of the region?")[-1] for s in sessions[:20]
    ]
    assert all(e.event == "input.requested" for e in waiting)
    runs = [alice.get(f"/runs/{e.data['run_id']}").json() for e in waiting]
    assert {r["status"] for r in runs} == {"waiting_input"}
    assert agent_threads() == []
    assert all(live.call(live.state.locks.holder(s["id"])) is None for s in sessions[:20])

    # Another session's question runs as usual meanwhile.
    llm.script(code_reply("print(2 + 2)"), final_reply("'4'"))
    with alice.stream(
        "POST", f"/sessions/{sessions[20]['id']}/query", json={"query": "Two and two?"}
    ) as response:
        other = collect(response)
    assert finished(other)["status"] == "succeeded" and of(other, "final")[0]["answer"] == "4"

    # Each waiting run still takes its own answer.
    llm.script(code_reply("print(choice)"), final_reply("choice"))
    first = waiting[0].data["run_id"]
    assert alice.post(f"/runs/{first}/input", json={"answer": "North"}).status_code == 200
    done = follow(alice, first, 0)
    assert finished(done)["status"] == "succeeded" and of(done, "final")[0]["answer"] == "North"
    for event in waiting[1:]:
        assert alice.post(f"/runs/{event.data['run_id']}/cancel").json()["status"] == "cancelled"


def test_an_answer_given_to_a_second_instance_resumes_the_run(
    two_instances: tuple[LiveServer, LiveServer], llm: ScriptedLLM
) -> None:
    first, second = two_instances
    with Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        here = admin.new_user("carol@example.com")
    elsewhere = Api(second).as_user("carol@example.com", "user-password-1")
    project = here.project()
    assert here.upload(project["id"], "sales data.csv", SALES).status_code == 201
    session = here.post(f"/projects/{project['id']}/sessions", json={"title": "Two"}).json()
    llm.script(
        ASK,
        code_reply("print(kind, df['revenue'].sum())"),
        final_reply("f'Total {kind} revenue is 4490.75.'"),
    )
    # The first instance's stream stays open across the wait and ends with the run.
    with here.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Revenue?"}
    ) as response:
        seen: list[Event] = []
        for event in read_events(response):
            if event is None:
                continue
            seen.append(event)
            if event.event == "input.requested":
                run_id = event.data["run_id"]
                answered = elsewhere.post(f"/runs/{run_id}/input", json={"answer": "net"})
                assert answered.status_code == 200, answered.text
            if event.event == "run.finished":
                break
    here.close()
    elsewhere.close()
    assert finished(seen)["status"] == "succeeded"
    assert of(seen, "input.received")[0]["answer"] == "net"
    assert "net 4490.75" in of(seen, "step.output")[0]["output"]
    assert of(seen, "final")[0]["answer"] == "Total net revenue is 4490.75."
    assert [e.id for e in seen] == list(range(1, len(seen) + 1))
    # The second instance ran the rest: the project's file was brought there from storage.
    assert project_file(second.settings.DATA_DIR, session["id"], "sales data.csv") == SALES


def test_deleting_a_session_ends_its_waiting_run(alice: Api, session, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    llm.script(ASK)
    with alice.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Revenue?"}
    ) as response:
        stream = read_events(response)
        for event in stream:
            if event is not None and event.event == "input.requested":
                break
        assert alice.delete(f"/sessions/{session['id']}").status_code == 204
        rest = [e for e in stream if e is not None]
    assert rest[-1].event == "run.finished"
    assert rest[-1].data["status"] == "cancelled"
    assert rest[-1].data["error"] == "Its session was deleted."


def test_a_waiting_run_outlives_a_restart_of_the_workbench(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    """Embedded (in-process locks and events): the question is still there after a restart,
    and answering it then finishes the run."""
    settings = stack_settings("embedded", tmp_path / "data", LLM_API_BASE=llm.api_base)
    first = LiveServer(settings).start()
    try:
        first.call(reset_state(first))
        api = Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        project = api.project()
        assert api.upload(project["id"], "sales data.csv", SALES).status_code == 201
        session = api.post(f"/projects/{project['id']}/sessions", json={}).json()
        llm.script(
            ASK,
            code_reply("print(kind, df['revenue'].sum())"),
            final_reply("f'Total {kind} revenue is 4490.75.'"),
        )
        asked = ask_until_waiting(api, session["id"], "Revenue?")[-1]
        run_id = asked.data["run_id"]
        api.close()
    finally:
        first.stop()

    again = LiveServer(settings).start()
    try:
        api = Api(again).as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        run = api.get(f"/runs/{run_id}").json()
        assert run["status"] == "waiting_input"
        assert run["pending"]["question"] == "Net or gross revenue?"
        answered: list[int] = []
        with api.stream("GET", f"/runs/{run_id}/events", params={"after": 0}) as response:
            seen: list[Event] = []
            for event in read_events(response):
                if event is None:
                    continue
                seen.append(event)
                if event.event == "input.requested" and not answered:
                    reply = api.post(f"/runs/{run_id}/input", json={"answer": "net"})
                    answered.append(reply.status_code)
                if event.event == "run.finished":
                    break
        assert answered == [200]
        assert names(seen)[0] == "run.started"  # the stored events came first
        assert [e.id for e in seen] == list(range(1, len(seen) + 1))
        assert finished(seen)["status"] == "succeeded"
        # The variables of the first process (df) came back from the session's snapshot.
        assert "net 4490.75" in of(seen, "step.output")[0]["output"]
        api.close()
    finally:
        again.stop()

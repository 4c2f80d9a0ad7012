"""Review mode: each code block waits for the user, who approves, edits or rejects it
(POST /runs/{id}/approval); the real API and sandbox, the scripted LLM over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.api.test_asking import agent_threads, follow
from tests.api.test_query import READ, finished, names, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, until


def in_review(api: Api, session: dict[str, Any]) -> None:
    changed = api.patch(f"/sessions/{session['id']}", json={"autonomy": "review"})
    assert changed.status_code == 200 and changed.json()["autonomy"] == "review"


def ask_until_approval(api: Api, session_id: str, query: str) -> list[Event]:
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
        assert response.status_code == 200, response.read()
        return until(response, "approval.requested")


def next_approval(api: Api, run_id: str, after: int) -> list[Event]:
    with api.stream("GET", f"/runs/{run_id}/events", params={"after": after}) as response:
        return until(response, "approval.requested")


def test_approved_code_runs_once_approved_and_not_before(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    in_review(alice, session)
    code = f"{READ}\ndf.to_csv('copy.csv')\nprint(df['revenue'].sum())"
    llm.script(code_reply(code, "Sum the revenue."), final_reply("'Total revenue is 4490.75.'"))
    events = ask_until_approval(alice, session["id"], "Total revenue?")
    request = events[-1]
    assert request.event == "approval.requested", names(events)
    assert request.data["step"] == 1 and request.data["code"] == code
    assert "step.output" not in names(events) and "step.finished" not in names(events)
    run_id = request.data["run_id"]
    run = alice.get(f"/runs/{run_id}").json()
    assert run["status"] == "waiting_approval"
    assert run["pending"] == {"kind": "approval", "step": 1, "question": None, "code": code}
    assert run["steps"] == []
    # Nothing ran: the file the code would write is not there; nothing is held meanwhile.
    workspace = Path(live.settings.DATA_DIR, "workspaces", session["id"])
    assert not (workspace / "copy.csv").exists()
    assert agent_threads() == [] and live.call(live.state.locks.holder(session["id"])) is None

    approved = alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"})
    assert approved.status_code == 200, approved.text
    rest = follow(alice, run_id, request.id)
    assert rest[0].event == "approval.received"
    assert rest[0].data["decision"] == "approve" and rest[0].data["step"] == 1
    assert "4490.75" in of(rest, "step.output")[0]["output"]
    assert (workspace / "copy.csv").exists()
    # The approved step is step 1 (not a new one), with the tokens its model call cost.
    step1 = [d for d in of(rest, "step.finished") if d["step"] == 1]
    assert len(step1) == 1 and step1[0]["tokens_in"] > 0
    assert "model.delta" not in names(rest)[: names(rest).index("step.output")]
    # A final answer written out runs without asking.
    end = finished(rest)
    assert end["status"] == "succeeded" and of(rest, "final")[0]["answer"].endswith("4490.75.")
    assert len(llm.requests) == 2  # the approved step was not asked of the model again

    run = alice.get(f"/runs/{run_id}").json()
    assert [s["index"] for s in run["steps"]] == [1, 2]
    assert run["steps"][0]["code"] == code and run["steps"][0]["tokens_in"] > 0
    assert run["approvals"] == [{"step": 1, "decision": "approve", "code": None, "feedback": None}]
    assert run["tokens_in"] == sum(s["tokens_in"] for s in run["steps"])  # counted once


def test_an_edit_changes_what_runs_and_what_the_agent_remembers(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    in_review(alice, session)
    wrong = f"{READ}\nprint(df['revenue'].max())"
    right = f"{READ}\nprint('total', df['revenue'].sum())"
    llm.script(code_reply(wrong, "Find the total."), final_reply("'Total revenue is 4490.75.'"))
    request = ask_until_approval(alice, session["id"], "Total revenue?")[-1]
    run_id = request.data["run_id"]
    no_code = alice.post(f"/runs/{run_id}/approval", json={"decision": "edit"})
    assert no_code.status_code == 422
    edited = alice.post(f"/runs/{run_id}/approval", json={"decision": "edit", "code": right})
    assert edited.status_code == 200, edited.text
    rest = follow(alice, run_id, request.id)
    assert rest[0].data == {**rest[0].data, "decision": "edit", "code": right}
    assert of(rest, "step.code")[0]["code"] == right  # the stream shows what runs
    output = of(rest, "step.output")[0]["output"]
    assert "total 4490.75" in output and "1310.25" not in output
    assert finished(rest)["status"] == "succeeded"
    # The model's memory holds the edited code, not its own.
    shown = llm.prompts()[1]
    assert "print('total', df['revenue'].sum())" in shown and ".max()" not in shown
    run = alice.get(f"/runs/{run_id}").json()
    assert run["steps"][0]["code"] == right and run["steps"][0]["thought"] == "Find the total."
    assert run["approvals"][0]["decision"] == "edit" and run["approvals"][0]["code"] == right


def test_rejected_code_does_not_run_and_the_agent_reads_why(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    in_review(alice, session)
    writes = f"{READ}\ndf.to_csv('copy.csv')"
    llm.script(
        code_reply(writes, "Save a copy first."),
        code_reply(f"{READ}\nprint(df['revenue'].sum())", "Just the total, then."),
        final_reply("'Total revenue is 4490.75.'"),
    )
    request = ask_until_approval(alice, session["id"], "Total revenue?")[-1]
    run_id = request.data["run_id"]
    feedback = "Do not write files; just print the total."
    rejected = alice.post(
        f"/runs/{run_id}/approval", json={"decision": "reject", "feedback": feedback}
    )
    assert rejected.status_code == 200, rejected.text
    # The agent tries again; its new code waits for approval too.
    second = next_approval(alice, run_id, request.id)
    assert second[0].event == "approval.received" and second[0].data["feedback"] == feedback
    assert second[-1].event == "approval.requested" and second[-1].data["step"] == 2
    assert feedback in llm.prompts()[1] and "did not run" in llm.prompts()[1]
    workspace = Path(live.settings.DATA_DIR, "workspaces", session["id"])
    assert not (workspace / "copy.csv").exists()

    assert alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"}).status_code == 200
    rest = follow(alice, run_id, second[-1].id)
    assert finished(rest)["status"] == "succeeded"
    assert "4490.75" in of(rest, "step.output")[0]["output"]
    run = alice.get(f"/runs/{run_id}").json()
    assert [(s["index"], s["error"]) for s in run["steps"]][:2] == [
        (1, f"Rejected by the user: {feedback}"),
        (2, None),
    ]
    assert run["steps"][0]["code"] == writes and run["steps"][0]["output"] is None
    assert [a["decision"] for a in run["approvals"]] == ["reject", "approve"]
    assert not (workspace / "copy.csv").exists()


def test_approval_answers_only_a_run_that_waits_for_it(
    alice: Api, bob: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    assert alice.patch(f"/sessions/{session['id']}", json={"autonomy": "yes"}).status_code == 422
    assert alice.get(f"/sessions/{session['id']}").json()["autonomy"] == "auto"
    llm.script(final_reply("'done'"))
    with alice.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Hi?"}
    ) as response:
        run_id = until(response, "run.finished")[0].data["run_id"]
    late = alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"})
    assert late.status_code == 409 and late.json()["code"] == "not_waiting_approval"

    in_review(alice, session)
    llm.script(code_reply("print(1)"))
    request = ask_until_approval(alice, session["id"], "One?")[-1]
    waiting = request.data["run_id"]
    assert bob.post(f"/runs/{waiting}/approval", json={"decision": "approve"}).status_code == 404
    wrong_kind = alice.post(f"/runs/{waiting}/input", json={"answer": "yes"})
    assert wrong_kind.status_code == 409 and wrong_kind.json()["code"] == "not_waiting_input"
    assert alice.post(f"/runs/{waiting}/cancel").json()["status"] == "cancelled"


def test_a_final_step_that_only_states_approved_results_is_not_asked_again(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    in_review(alice, session)
    code = f"{READ}\ntotal = df['revenue'].sum()"
    answer = 'final_answer(f"Total revenue is {total}.")'
    llm.script(code_reply(code, "Sum the revenue."), code_reply(answer, "Say it."))
    request = ask_until_approval(alice, session["id"], "Total revenue?")[-1]
    run_id = request.data["run_id"]
    assert alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"}).status_code == 200
    rest = follow(alice, run_id, request.id)
    # One approval was asked for, of step 1; the answer that only states its total was not.
    assert "approval.requested" not in names(rest), names(rest)
    end = finished(rest)
    assert end["status"] == "succeeded"
    assert of(rest, "final")[0]["answer"] == "Total revenue is 4490.75."
    run = alice.get(f"/runs/{run_id}").json()
    assert [a["step"] for a in run["approvals"]] == [1]
    assert run["steps"][1]["code"] == answer

    # A final step that computes something new still waits for the user.
    llm.script(code_reply("final_answer(df['revenue'].max())", "The biggest."))
    again = ask_until_approval(alice, session["id"], "Biggest sale?")[-1]
    assert again.event == "approval.requested" and again.data["step"] == 1
    assert alice.post(f"/runs/{again.data['run_id']}/cancel").json()["status"] == "cancelled"

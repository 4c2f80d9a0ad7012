"""A branch's variables are those that existed when the run it continues after ended:
from the state kept at that run's end (app.runs.run_states), else by replaying its past in
a fresh worker, which it says; the parent is untouched and keeps working."""

from __future__ import annotations

from tests.api.branching import (
    Q1,
    Q2,
    answered,
    branch,
    new_session,
    sees,
    shown,
    three_questions,
)
from tests.api.test_query import _start_in_background, _wait_for, of
from tests.conftest import WAIT_FOR_GO, Api, release
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer


def test_every_point_of_the_history_is_restored_from_its_kept_state(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    session, runs = three_questions(alice, llm)
    for number, run in enumerate(runs, start=1):
        made = branch(alice, session["id"], run["id"])
        output, events = shown(alice, made["id"], llm)
        sees(output, number)  # the DataFrame, the dict, and the variable Q3 deleted
        [said] = of(events, "state.restored")
        assert (said["source"], said["notes"]) == ("snapshot", []), said
    # The parent still has Q3's.
    output, _ = shown(alice, session["id"], llm)
    sees(output, 3)


def test_each_branch_starts_with_the_variables_of_its_point(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    # One state kept per session: the older points are gone and are rebuilt by replay.
    live.settings.SNAPSHOT_KEEP_PER_SESSION = 1
    try:
        _each_branch(live, alice, llm)
    finally:
        live.settings.SNAPSHOT_KEEP_PER_SESSION = 50


def _each_branch(live: LiveServer, alice: Api, llm: ScriptedLLM) -> None:
    session, runs = three_questions(alice, llm)
    after_q1 = branch(alice, session["id"], runs[0]["id"])
    after_q2 = branch(alice, session["id"], runs[1]["id"])
    after_q3 = branch(alice, session["id"], runs[2]["id"])  # the newest: its snapshot is kept

    output, events = shown(alice, after_q1["id"], llm)
    sees(output, 1)
    [said] = of(events, "state.restored")
    assert said["source"] == "replay"
    assert said["notes"][0] == "Replayed 2 steps of 1 question."  # (its answer step too)
    restored = alice.get(f"/sessions/{after_q1['id']}").json()["restored"]
    assert restored == {"from": "replay", "notes": said["notes"]}

    output, events = shown(alice, after_q2["id"], llm)
    sees(output, 2)
    assert of(events, "state.restored")[0]["notes"][0] == "Replayed 4 steps of 2 questions."

    output, events = shown(alice, after_q3["id"], llm)
    sees(output, 3)
    assert [e["source"] for e in of(events, "state.restored")] == ["snapshot"]
    assert alice.get(f"/sessions/{after_q3['id']}").json()["restored"]["from"] == "snapshot"

    # The branch's agent was told its past as if asked there.
    prompt = str(llm.requests[-2]["messages"][0]["content"])
    assert "Question answered by A2" in prompt and "Question answered by A3" in prompt

    # The parent is unchanged, and keeps working: its variables are Q3's.
    output, events = shown(alice, session["id"], llm)
    sees(output, 3)
    assert of(events, "state.restored") == []
    assert alice.get(f"/sessions/{session['id']}").json()["restored"] is None
    # A second question in a branch goes on from its own state (no new restore).
    answered(alice, after_q1["id"], llm, "config['k'] = 100", "changed")
    output, events = shown(alice, after_q1["id"], llm)
    assert "config {'k': 100}" in output and of(events, "state.restored") == []

    # A branch of a branch, after a run the branch inherited.
    deeper = branch(alice, after_q2["id"], runs[0]["id"])
    output, events = shown(alice, deeper["id"], llm)
    sees(output, 1)
    # …and after the branch's own run: its past is Q1, Q2 and the branch's question.
    own = alice.get(f"/sessions/{after_q1['id']}/runs").json()["items"]
    assert [r["inherited"] for r in own] == [True, False, False, False]
    later = branch(alice, after_q1["id"], own[2]["id"])
    output, _ = shown(alice, later["id"], llm)
    assert "config {'k': 100}" in output and "df {'a': [1, 2]}" in output


def test_what_a_snapshot_could_not_hold_is_said(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    session = new_session(alice)
    code = "numbers = (i for i in range(3))\ntotal = 42"  # a generator does not pickle
    answered(alice, session["id"], llm, code, "made")
    [run] = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert run["steps"][0]["error"] is None
    after = branch(alice, session["id"], run["id"])
    events = answered(alice, after["id"], llm, "print('total', total)", "shown")
    assert "total 42" in "".join(o["output"] for o in of(events, "step.output"))
    [said] = of(events, "state.restored")
    assert said["source"] == "snapshot"
    assert said["notes"] == ["numbers (generator) could not be kept and was not restored."]
    assert alice.get(f"/sessions/{after['id']}").json()["restored"]["notes"] == said["notes"]


def test_a_busy_parent_can_be_branched_after_a_finished_question_only(
    alice: Api, llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    session = new_session(alice)
    answered(alice, session["id"], llm, Q1, "A1")
    answered(alice, session["id"], llm, Q2, "A2")
    llm.script(code_reply(WAIT_FOR_GO + "\nconfig['k'] = 'later'"), final_reply("'A3'"))
    thread, seen = _start_in_background(alice, session["id"], "Held question")
    _wait_for(lambda: any(e.event == "step.code" for e in seen))
    running = seen[0].data["run_id"]
    refused = alice.post(f"/sessions/{session['id']}/branch", json={"after_run_id": running})
    assert refused.status_code == 409 and refused.json()["code"] == "run_not_finished"
    assert "not finished" in refused.json()["detail"]
    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    after_q2 = branch(alice, session["id"], runs[1]["id"])  # while the parent runs
    release(long_steps, session)
    thread.join(60)
    assert seen[-1].data["status"] == "succeeded"
    output, _ = shown(alice, after_q2["id"], llm)
    sees(output, 2)  # Q2's end, not the later question's

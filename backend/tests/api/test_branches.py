"""Branches (issue 43), the API a user meets: making one after any finished question, its
past listed first (read-only, inherited), the tree, refusals, roles and the audit log."""

from __future__ import annotations

import uuid

from tests.api.branching import branch, new_session, three_questions
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer


def test_a_branch_lists_its_past_then_its_own_and_appears_in_the_tree(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    session, runs = three_questions(alice, llm)
    after_q2 = branch(alice, session["id"], runs[1]["id"])
    assert after_q2["title"] == "Sales — branch after Q2"
    assert after_q2["parent_session_id"] == session["id"]
    assert after_q2["branched_after_run_id"] == runs[1]["id"]
    assert after_q2["project_id"] == session["project_id"]
    assert after_q2["autonomy"] == session["autonomy"]
    assert after_q2["restored"] is None  # until its first run has its state

    listed = alice.get(f"/sessions/{after_q2['id']}/runs").json()
    assert listed["total"] == 2
    assert [r["final_answer"] for r in listed["items"]] == ["A1", "A2"]
    assert all(r["inherited"] and r["session_id"] == session["id"] for r in listed["items"])
    parent_runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert [r["inherited"] for r in parent_runs] == [False, False, False]  # the parent: as it was
    # The past's steps and artifacts read through the branch's runs.
    assert alice.get(f"/runs/{runs[0]['id']}").json()["steps"][0]["code"].startswith("import")

    # A branch of the branch, after an inherited run: its past is the chain up to that run.
    after_q1 = branch(alice, after_q2["id"], runs[0]["id"])
    assert after_q1["parent_session_id"] == after_q2["id"]
    assert after_q1["title"].endswith("— branch after Q1")
    past = alice.get(f"/sessions/{after_q1['id']}/runs").json()["items"]
    assert [r["final_answer"] for r in past] == ["A1"]

    for asked in (session, after_q2, after_q1):  # the same tree, from its root, whichever is asked
        tree = alice.get(f"/sessions/{asked['id']}/tree").json()
        assert tree["session"]["id"] == session["id"]
        assert tree["branched_after_run_id"] is None and tree["truncated"] is False
        [child] = tree["children"]
        assert child["session"]["id"] == after_q2["id"]
        assert child["after_query"] == "Question answered by A2"
        [grandchild] = child["children"]
        assert grandchild["session"]["id"] == after_q1["id"]
        assert grandchild["after_query"] == "Question answered by A1"
        assert grandchild["children"] == []

    log = alice.get(f"/projects/{session['project_id']}/audit", params={"action": "session.branch"})
    assert log.status_code == 200, log.text
    entries = [e for e in log.json()["items"] if e["action"] == "session.branch"]
    assert len(entries) == 2
    said = "branched the session “Sales” after “Question answered by A2”"
    assert any(said in e["summary"] for e in entries)

    # Two more branches after the same question of the same parent are told apart.
    again = branch(alice, session["id"], runs[1]["id"])
    assert again["title"] == "Sales — branch 2 after Q2"
    third = branch(alice, session["id"], runs[1]["id"])
    assert third["title"] == "Sales — branch 3 after Q2"


def test_bad_branch_requests_are_refused_with_a_reason(
    live: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    session, runs = three_questions(alice, llm)
    other = new_session(alice, "Other")
    url = f"/sessions/{other['id']}/branch"
    # A run of another session (not in this one's history): 404 with a code and a sentence.
    refused = alice.post(url, json={"after_run_id": runs[0]["id"]})
    assert refused.status_code == 404
    assert refused.json()["code"] == "run_not_in_session"
    assert "history" in refused.json()["detail"]
    unknown = alice.post(url, json={"after_run_id": str(uuid.uuid4())})
    assert unknown.status_code == 404 and unknown.json()["code"] == "run_not_in_session"
    malformed = alice.post(url, json={"after_run_id": "Q2"})
    assert malformed.status_code == 422
    # Another user's session is not revealed; a viewer of the project may not branch.
    stranger = bob.post(f"/sessions/{session['id']}/branch", json={"after_run_id": runs[0]["id"]})
    assert stranger.status_code == 404
    added = alice.post(
        f"/projects/{session['project_id']}/members",
        json={"email": "bob@example.com", "role": "viewer"},
    )
    assert added.status_code == 201, added.text
    viewer = bob.post(f"/sessions/{session['id']}/branch", json={"after_run_id": runs[0]["id"]})
    assert viewer.status_code == 403 and viewer.json()["code"] == "forbidden_role"
    assert bob.get(f"/sessions/{session['id']}/tree").status_code == 200  # reading is fine
    assert alice.get(f"/sessions/{session['id']}/tree").json()["children"] == []

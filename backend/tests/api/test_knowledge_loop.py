"""Issue 41's whole loop, as a team meets it, through the API on both stacks with the
scripted model: an analyst's question fails on a misnamed column and succeeds once the
agent corrects it; the review pass proposes the lesson; the project's check fails while the
lesson waits for a person (a proposal reaches no prompt) and passes once an editor approves
it (a viewer cannot); every later question is given the lesson and says it was shaped by
it; rejecting it takes it out again; the audit log tells each step. A check's own runs are
never reviewed: measuring the knowledge does not add to it.
"""

from __future__ import annotations

import json
from typing import Any

from tests.api.test_checks import add_check, finished, start
from tests.api.test_knowledge_prompt import knowing, system_prompt
from tests.api.test_knowledge_review import corrected_run, listed, reviewed, settled
from tests.api.test_query import ask
from tests.api.test_query import finished as run_finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

ORDERS = b"item,price\npen,1.5\nink,2.0\n"
LESSON = {
    "kind": "lesson",
    "title": "`prise` is not a column: use `price`",
    "body": "orders.csv has no column 'prise' (KeyError); the price column is 'price'.",
}
QUESTION = "What do the prices add up to?"
RIGHT, WRONG = "The prices add up to 3.5. @total[3.5]", "@total[0]"


def checks_accuracy(api: Api, llm: ScriptedLLM, project_id: str) -> dict[str, Any]:
    """Run the project's checks with a model that is right only when it knows the lesson."""
    llm.script(knowing(LESSON["body"], RIGHT, WRONG))
    check_run = finished(api, start(api, project_id)["id"])
    assert check_run["status"] == "succeeded", check_run
    return check_run


def test_a_correction_proposed_approved_and_measured_shapes_every_later_answer(
    alice: Api, bob: Api, llm: ScriptedLLM, live: LiveServer
) -> None:
    project = alice.project("Orders")
    pid = project["id"]
    assert alice.upload(pid, "orders.csv", ORDERS).status_code == 201
    viewer = alice.post(
        f"/projects/{pid}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert viewer.status_code == 201, viewer.text
    session = alice.post(f"/projects/{pid}/sessions", json={"title": "Orders"}).json()
    check = add_check(alice, pid, question=QUESTION, expected={"total": "3.5"})

    # 1. The agent stumbles on 'prise', corrects itself; the review pass proposes the lesson.
    live.settings.KNOWLEDGE_REVIEW = True
    try:
        corrected_run(llm, json.dumps({"items": [LESSON]}))
        events = ask(alice, session["id"], QUESTION)
        assert run_finished(events)["status"] == "succeeded"
        reviewed(alice, events)
        [proposal] = listed(alice, pid, status="proposed")
        assert (proposal["title"], proposal["body"]) == (LESSON["title"], LESSON["body"])
        assert proposal["source_run_id"] == events[0].data["run_id"]

        # 2. Before anyone approves it, the check fails: a proposal reaches no prompt. The
        # check's own run is not reviewed (nothing more is proposed, the review is not asked).
        before = checks_accuracy(alice, llm, pid)
        live.call(settled(live))
        assert (before["passed"], before["accuracy"]) == (0, 0.0), before
        assert before["results"][0]["answer"] == WRONG
        assert LESSON["body"] not in system_prompt(llm.requests[-1]["messages"])
        assert llm.review_requests == []
        assert len(listed(alice, pid, status="proposed")) == 1
    finally:
        live.settings.KNOWLEDGE_REVIEW = False
        live.call(settled(live))

    # 3. A viewer cannot approve it; the owner does.
    refused = bob.patch(f"/knowledge/{proposal['id']}", json={"status": "approved"})
    assert refused.status_code == 403, refused.text
    approved = alice.patch(f"/knowledge/{proposal['id']}", json={"status": "approved"})
    assert approved.status_code == 200 and approved.json()["status"] == "approved", approved.text
    assert approved.json()["approved_by_email"] == "alice@example.com"

    # 4. The same check passes now: the team measured what the lesson is worth.
    after = checks_accuracy(alice, llm, pid)
    assert (after["passed"], after["accuracy"]) == (1, 1.0), after
    assert after["results"][0]["check_id"] == check["id"]
    assert after["results"][0]["answer"].startswith(RIGHT)
    history = alice.get(f"/projects/{pid}/check-runs").json()["items"]
    assert [h["accuracy"] for h in history] == [1.0, 0.0]

    # 5. A later question in the project is given the lesson and says it shaped the answer.
    later = alice.post(f"/projects/{pid}/sessions", json={"title": "Later"}).json()
    llm.script(knowing(LESSON["body"], RIGHT, WRONG))
    events = ask(alice, later["id"], "And the prices, summed?")
    assert run_finished(events)["status"] == "succeeded"
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["final_answer"].startswith(RIGHT)
    assert [(k["item_id"], k["title"], k["used"]) for k in run["knowledge"]] == [
        (proposal["id"], LESSON["title"], True)
    ]
    assert bob.get(f"/runs/{run['id']}").json()["knowledge"] == run["knowledge"]

    # 6. Rejected, it is no longer given.
    rejected = alice.patch(f"/knowledge/{proposal['id']}", json={"status": "rejected"})
    assert rejected.status_code == 200, rejected.text
    llm.script(knowing(LESSON["body"], RIGHT, WRONG))
    events = ask(alice, later["id"], "Once more: the prices, summed?")
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["final_answer"] == WRONG and run["knowledge"] == []
    assert LESSON["body"] not in system_prompt(llm.requests[-1]["messages"])

    actions = [e["action"] for e in alice.get(f"/projects/{pid}/audit").json()["items"]]
    for action in (
        "knowledge.proposed",
        "knowledge.approved",
        "knowledge.rejected",
        "check.created",
        "check_run.started",
        "check_run.finished",
    ):
        assert action in actions, actions

"""The review pass, end to end: after a run succeeds, the scripted model's review proposes
knowledge items; the API shows them (the next run's stream starts with knowledge.proposed,
the audit log tells of them, the run's totals count the review's tokens).

The review pass runs after run.finished, in the background; a test knows it is over when
the run's stored tokens grow past those run.finished told (the pass stores its proposals
and its tokens in one transaction), or, where no pass may run, when a later run's pass is
over (runs of a session end in order, and each pass is handed its run as that run ends).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.test_query import ask, finished, of
from tests.conftest import WAIT_FOR_GO, Api
from tests.support.llm import HttpError, ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, read_into

ORDERS = b"item,price\npen,1.5\nink,2.0\n"
READ = "import pandas as pd\ndf = pd.read_csv('orders.csv')"
LESSON = {
    "kind": "lesson",
    "title": "`prise` is not a column: use `price`",
    "body": "orders.csv has no column 'prise' (KeyError); the price column is 'price'.",
}
# A lesson no step shows: the run never failed on 'cost'.
UNCONFIRMED = {
    "kind": "lesson",
    "title": "`cost` is the old name of `amount`",
    "body": "Use 'amount' where 'cost' was used.",
}
# Waiting for the background pass: not a timing assumption, a bound on a hang.
HANG_SECONDS = 60


@pytest.fixture
def reviewing(live: LiveServer) -> Iterator[LiveServer]:
    """The review pass on (the tests' servers run without it); off again afterwards, once
    the passes under way are over (a pass of this test's last run must not reach the
    scripted model during the next test)."""
    live.settings.KNOWLEDGE_REVIEW = True
    try:
        yield live
    finally:
        live.settings.KNOWLEDGE_REVIEW = False
        live.call(settled(live))


async def settled(live: LiveServer) -> None:
    await asyncio.gather(*live.state.runs.rt.review.tasks, return_exceptions=True)


@pytest.fixture
def orders(alice: Api) -> dict[str, Any]:
    """A session of alice's on a project holding orders.csv."""
    project = alice.project("Orders")
    assert alice.upload(project["id"], "orders.csv", ORDERS).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Orders"}).json()
    return {"project": project, "session": session}


def proposals(*items: dict[str, str]) -> str:
    return json.dumps({"items": list(items)})


def corrected_run(llm: ScriptedLLM, review: str | None) -> None:
    """The agent fails on 'prise', then uses 'price' and answers."""
    llm.script(
        code_reply(f"{READ}\nprint(df['prise'].sum())"),
        code_reply("print(df['price'].sum())"),
        final_reply("'The prices add up to 3.5.'"),
        review=() if review is None else (review,),
    )


def reviewed(api: Api, events: list[Event]) -> dict[str, Any]:
    """The run once its review pass is over (its tokens grew past run.finished's)."""
    end = finished(events)
    run_id = events[0].data["run_id"]
    deadline = time.monotonic() + HANG_SECONDS
    while True:
        run = dict(api.get(f"/runs/{run_id}").json())
        if run["tokens_in"] > end["tokens_in"]:
            return run
        assert time.monotonic() < deadline, "the review pass never ended"
        time.sleep(0.05)


def announced(events: list[Event]) -> list[dict[str, Any]]:
    """The items knowledge.proposed brought at the start of a run's stream."""
    found = of(events, "knowledge.proposed")
    assert len(found) <= 1
    if found:
        position = [e.event for e in events].index("knowledge.proposed")
        assert [e.event for e in events][:position] == ["run.started"]
    return list(found[0]["items"]) if found else []


def next_run_announces(api: Api, llm: ScriptedLLM, session_id: str) -> list[dict[str, Any]]:
    llm.script(final_reply("'ok'"))
    events = ask(api, session_id, "Anything else?")
    assert finished(events)["status"] == "succeeded"
    return announced(events)


def listed(api: Api, project_id: str, **params: str) -> list[dict[str, Any]]:
    response = api.get(f"/projects/{project_id}/knowledge", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def audit_proposed(api: Api, project_id: str) -> list[dict[str, Any]]:
    page = api.get(f"/projects/{project_id}/audit").json()
    return [e for e in page["items"] if e["action"] == "knowledge.proposed"]


def test_a_corrected_column_name_yields_a_proposed_lesson(
    alice: Api, orders: dict[str, Any], llm: ScriptedLLM, reviewing: LiveServer
) -> None:
    session_id, project_id = orders["session"]["id"], orders["project"]["id"]
    corrected_run(llm, proposals(LESSON, UNCONFIRMED))
    events = ask(alice, session_id, "What do the prices add up to?")
    assert finished(events)["status"] == "succeeded"
    assert announced(events) == []  # nothing was proposed before this run
    run = reviewed(alice, events)

    # The agent's three replies went to the agent; the review was asked apart, once.
    assert len(llm.requests) == 3
    assert len(llm.review_requests) == 1
    shown = "\n".join(m["content"] for m in llm.review_requests[0]["messages"])
    for seen in ("What do the prices add up to?", "KeyError", "df['price']", "add up to 3.5"):
        assert seen in shown, seen
    assert run["cost_usd"] is None or run["cost_usd"] > 0

    waiting = listed(alice, project_id, status="proposed")
    assert [(i["kind"], i["title"], i["source_run_id"]) for i in waiting] == [
        ("lesson", LESSON["title"], run["id"])
    ]
    assert listed(alice, project_id, status="approved") == []  # nothing approved by itself
    items = next_run_announces(alice, llm, session_id)
    assert [(i["id"], i["kind"]) for i in items] == [(waiting[0]["id"], "lesson")]
    item = items[0]
    assert item["status"] == "proposed" and item["source_run_id"] == run["id"]
    assert item["created_by"] is None and item["approved_by"] is None
    assert item["project_id"] == project_id and item["flags"] == []
    assert "'price'" in item["body"]

    logged = audit_proposed(alice, project_id)
    assert len(logged) == 1 and logged[0]["actor"] is None
    assert logged[0]["detail"]["titles"] == [LESSON["title"]]
    assert logged[0]["summary"].startswith("The review pass proposed 1 knowledge item")
    # Told once: the run after that one starts without it.
    assert next_run_announces(alice, llm, session_id) == []


def test_failed_and_cancelled_runs_are_not_reviewed(
    alice: Api,
    orders: dict[str, Any],
    llm: ScriptedLLM,
    reviewing: LiveServer,
    long_steps: LiveServer,
) -> None:
    session_id, project_id = orders["session"]["id"], orders["project"]["id"]
    # Failed: the model server refuses the key.
    llm.script(HttpError(401, "bad key"), review=(proposals(LESSON),))
    failed = ask(alice, session_id, "Will this fail?")
    assert finished(failed)["status"] == "failed"

    # Cancelled in its first step.
    llm.script(code_reply(WAIT_FOR_GO), final_reply("'never'"), review=(proposals(LESSON),))
    seen: list[Event] = []

    def read() -> None:
        body = {"query": "Will this be stopped?"}
        with alice.stream("POST", f"/sessions/{session_id}/query", json=body) as response:
            read_into(response, seen)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + HANG_SECONDS
    while not any(e.event == "step.code" for e in seen):
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.05)
    assert alice.post(f"/runs/{seen[0].data['run_id']}/cancel").status_code == 200
    reader.join(HANG_SECONDS)
    assert finished(seen)["status"] == "cancelled"

    # A run that succeeds afterwards is reviewed: the only review pass of the three.
    corrected_run(llm, proposals(LESSON))
    events = ask(alice, session_id, "What do the prices add up to?")
    announced_first = announced(events)
    reviewed(alice, events)
    assert announced_first == []
    assert len(llm.review_requests) == 1
    shown = "\n".join(m["content"] for m in llm.review_requests[0]["messages"])
    assert "What do the prices add up to?" in shown and "Will this" not in shown
    for ended in (failed, seen):
        run = alice.get(f"/runs/{ended[0].data['run_id']}").json()
        assert run["tokens_in"] == finished(ended)["tokens_in"]  # no pass counted on it
    assert [e["detail"]["run_id"] for e in audit_proposed(alice, project_id)] == [
        events[0].data["run_id"]
    ]
    assert [i["source_run_id"] for i in listed(alice, project_id)] == [events[0].data["run_id"]]


def test_what_the_project_knows_is_not_proposed_again(
    alice: Api, orders: dict[str, Any], llm: ScriptedLLM, reviewing: LiveServer
) -> None:
    session_id, project_id = orders["session"]["id"], orders["project"]["id"]
    written = {"kind": "rule", "title": "Prices are in euros", "body": "Every price is in EUR."}
    assert alice.post(f"/projects/{project_id}/knowledge", json=written).status_code == 201
    corrected_run(llm, proposals(LESSON))
    reviewed(alice, ask(alice, session_id, "What do the prices add up to?"))

    # The proposed lesson and the written rule again, worded a little differently, and a
    # new definition beside them.
    again = {**LESSON, "title": "'prise' is not a column -- use 'price'."}
    rule = {**written, "title": "prices are in euros.", "body": "All prices are in EUR."}
    term = {"kind": "definition", "title": "Basket", "body": "The items of one order."}
    corrected_run(llm, proposals(again, rule, term))
    events = ask(alice, session_id, "And the prices again?")
    assert [i["title"] for i in announced(events)] == [LESSON["title"]]
    second = reviewed(alice, events)

    items = next_run_announces(alice, llm, session_id)
    assert [(i["kind"], i["title"]) for i in items] == [("definition", "Basket")]
    assert items[0]["source_run_id"] == second["id"]
    assert sorted(i["title"] for i in listed(alice, project_id)) == sorted(
        [LESSON["title"], written["title"], "Basket"]
    )
    assert [len(e["detail"]["titles"]) for e in audit_proposed(alice, project_id)] == [1, 1]


def test_with_the_setting_off_nothing_is_reviewed(
    alice: Api, orders: dict[str, Any], llm: ScriptedLLM, reviewing: LiveServer
) -> None:
    session_id, project_id = orders["session"]["id"], orders["project"]["id"]
    reviewing.settings.KNOWLEDGE_REVIEW = False
    corrected_run(llm, proposals(LESSON))
    off = ask(alice, session_id, "What do the prices add up to?")
    assert finished(off)["status"] == "succeeded"

    reviewing.settings.KNOWLEDGE_REVIEW = True
    llm.script(final_reply("'ok'"), review=(proposals(UNCONFIRMED),))
    on = ask(alice, session_id, "Anything else?")
    assert announced(on) == []
    reviewed(alice, on)
    assert len(llm.review_requests) == 1
    assert "Anything else?" in llm.review_requests[0]["messages"][1]["content"]
    run = alice.get(f"/runs/{off[0].data['run_id']}").json()
    assert run["tokens_in"] == finished(off)["tokens_in"]
    # The unconfirmed lesson of the second run's review was not kept either.
    assert audit_proposed(alice, project_id) == []
    assert listed(alice, project_id) == []
    assert next_run_announces(alice, llm, session_id) == []


def test_the_review_never_delays_the_answer_or_the_next_question(
    alice: Api, orders: dict[str, Any], llm: ScriptedLLM, reviewing: LiveServer
) -> None:
    """The review's model call is held until the test lets it go: meanwhile the run has
    ended and the session has answered another question."""
    session_id = orders["session"]["id"]
    settings = reviewing.settings
    timeouts = settings.LLM_TIMEOUT_SECONDS, settings.KNOWLEDGE_REVIEW_TIMEOUT_SECONDS
    settings.LLM_TIMEOUT_SECONDS = settings.KNOWLEDGE_REVIEW_TIMEOUT_SECONDS = 600
    go = threading.Event()

    def held(_: list[dict[str, Any]]) -> str:
        go.wait(HANG_SECONDS)
        return proposals(LESSON)

    try:
        corrected_run(llm, None)
        llm.review_replies.append(held)
        events = ask(alice, session_id, "What do the prices add up to?")
        assert finished(events)["status"] == "succeeded"
        deadline = time.monotonic() + HANG_SECONDS
        while not llm.review_requests:  # the pass waits for the model now
            assert time.monotonic() < deadline, "the review pass never asked the model"
            time.sleep(0.05)

        llm.replies.append(final_reply("'ok'"))
        follow_up = ask(alice, session_id, "Anything else?")
        assert finished(follow_up)["status"] == "succeeded"
        assert announced(follow_up) == []  # the first run's pass is not over
        run = alice.get(f"/runs/{events[0].data['run_id']}").json()
        assert run["tokens_in"] == finished(events)["tokens_in"]
    finally:
        go.set()
        settings.LLM_TIMEOUT_SECONDS, settings.KNOWLEDGE_REVIEW_TIMEOUT_SECONDS = timeouts
    reviewed(alice, events)
    assert [i["title"] for i in listed(alice, orders["project"]["id"], status="proposed")] == [
        LESSON["title"]
    ]


def test_a_project_past_its_budget_is_not_reviewed(
    alice: Api, orders: dict[str, Any], llm: ScriptedLLM, reviewing: LiveServer
) -> None:
    session_id, project_id = orders["session"]["id"], orders["project"]["id"]
    path = f"/projects/{project_id}"
    assert alice.patch(path, json={"budget_tokens": 200}).status_code == 200
    llm.script(final_reply("'3.5'"), review=(proposals(LESSON),))
    spent = ask(alice, session_id, "What do the prices add up to?")  # its one call spends more
    assert finished(spent)["status"] == "succeeded" and finished(spent)["tokens_in"] > 200

    # Raised again: the next run is reviewed, the one that spent the budget never was.
    assert alice.patch(path, json={"budget_tokens": None}).status_code == 200
    llm.script(final_reply("'ok'"))
    reviewed(alice, ask(alice, session_id, "Anything else?"))
    assert len(llm.review_requests) == 1
    assert "Anything else?" in llm.review_requests[0]["messages"][1]["content"]
    run = alice.get(f"/runs/{spent[0].data['run_id']}").json()
    assert run["tokens_in"] == finished(spent)["tokens_in"]
    assert listed(alice, project_id) == []

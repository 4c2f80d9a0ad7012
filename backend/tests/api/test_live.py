"""A session open in two browsers (issue 42, point 7): a teammate's question, the session's
new title and who else is there reach the other side through one live stream, not a timer;
across replicas too. The real API and stacks, the scripted LLM over HTTP."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import SALES
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api
from tests.support.live import LiveReader, emails, until_closed
from tests.support.llm import ScriptedLLM, final_reply
from tests.support.server import LiveServer
from tests.support.sse import collect


def shared_session(owner: Api, member_email: str, role: str = "editor") -> dict[str, Any]:
    project = owner.project()
    assert owner.upload(project["id"], "sales data.csv", SALES).status_code == 201
    added = owner.post(
        f"/projects/{project['id']}/members", json={"email": member_email, "role": role}
    )
    assert added.status_code == 201, added.text
    return dict(owner.post(f"/projects/{project['id']}/sessions", json={"title": "Sales"}).json())


def test_a_teammate_sees_the_question_its_run_the_title_and_who_is_there(
    alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    session = shared_session(alice, "bob@example.com")
    llm.script(final_reply("'Revenue is 4490.75.'"))
    with LiveReader(bob, session["id"]) as bobs:
        assert emails(bobs.next("presence")) == ["bob@example.com"]
        with LiveReader(alice, session["id"]) as alices:
            assert emails(alices.next("presence")) == ["alice@example.com", "bob@example.com"]
            joined = bobs.next("presence")
            assert emails(joined) == ["alice@example.com", "bob@example.com"]

            with alice.stream(
                "POST", f"/sessions/{session['id']}/query", json={"query": "What is the revenue?"}
            ) as response:
                asked = collect(response)
            run_id = asked[0].data["run_id"]
            created = bobs.next("run.created")
            assert created["run_id"] == run_id and created["query"] == "What is the revenue?"
            assert created["asked_by"]["email"] == "alice@example.com"
            assert created["kind"] == "question"
            # Bob follows the run he was told of, to its answer.
            with bob.stream("GET", f"/runs/{run_id}/events") as response:
                followed = collect(response)
            assert next(e.data for e in followed if e.event == "final")["answer"] == (
                "Revenue is 4490.75."
            )
            # The asker's own stream is told too (a second tab of hers follows it).
            assert alices.next("run.created")["run_id"] == run_id

            # A cell of hers is announced too, as a cell.
            with alice.stream(
                "POST",
                f"/sessions/{session['id']}/cells",
                json={"language": "python", "code": "print(6 * 7)"},
            ) as response:
                cell = collect(response)
            told = bobs.next("run.created")
            assert told["run_id"] == cell[0].data["run_id"] and told["kind"] == "cell"
            assert told["query"] == "print(6 * 7)"
            assert alices.next("run.created")["kind"] == "cell"

            renamed = alice.patch(f"/sessions/{session['id']}", json={"title": "Revenue 2026"})
            assert renamed.status_code == 200
            assert bobs.next("session.updated")["title"] == "Revenue 2026"
        # Alice closed the session: Bob sees her go.
        assert emails(bobs.next("presence")) == ["bob@example.com"]


def test_a_viewer_follows_live_and_a_stranger_gets_404(alice: Api, bob: Api, admin: Api) -> None:
    session = shared_session(alice, "bob@example.com", role="viewer")
    with LiveReader(bob, session["id"]) as bobs:
        assert emails(bobs.next("presence")) == ["bob@example.com"]
    with admin.new_user("eve@example.com") as eve:
        refused = eve.get(f"/sessions/{session['id']}/live")
        assert refused.status_code == 404 and refused.json()["code"] == "session_not_found"
    assert alice.get("/sessions/00000000-0000-0000-0000-000000000000/live").status_code == 404


def test_open_live_streams_are_bounded_per_user_and_per_process(
    alice: Api, admin: Api, live: LiveServer
) -> None:
    project = alice.project()
    first, second = (
        alice.post(f"/projects/{project['id']}/sessions", json={"title": t}).json()
        for t in ("One", "Two")
    )
    slots = live.state.live.slots
    per_user, per_process = slots.per_user, slots.per_process
    slots.per_user = 1
    try:
        with LiveReader(alice, first["id"]) as open_one:
            assert emails(open_one.next("presence")) == ["alice@example.com"]
            refused = alice.get(f"/sessions/{second['id']}/live")
            assert refused.status_code == 503, refused.text
            assert refused.json()["code"] == "too_many_streams"
            assert int(refused.headers["Retry-After"]) > 0
        # Closed, its place is free again.
        until_closed(slots)
        with LiveReader(alice, second["id"]) as open_two:
            assert emails(open_two.next("presence")) == ["alice@example.com"]
        # The process's bound holds for all users together.
        until_closed(slots)
        slots.per_user, slots.per_process = per_user, 1
        with LiveReader(alice, first["id"]) as open_one:
            assert emails(open_one.next("presence")) == ["alice@example.com"]
            with admin.new_user("bob@example.com") as bob:
                alice.post(
                    f"/projects/{project['id']}/members",
                    json={"email": "bob@example.com", "role": "viewer"},
                )
                full = bob.get(f"/sessions/{first['id']}/live")
                assert full.status_code == 503 and full.json()["code"] == "too_many_streams"
                assert int(full.headers["Retry-After"]) > 0
    finally:
        slots.per_user, slots.per_process = per_user, per_process


def test_a_question_asked_on_one_replica_reaches_a_viewer_on_another(
    two_instances: tuple[LiveServer, LiveServer], llm: ScriptedLLM
) -> None:
    first, second = two_instances
    with Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        admin.new_user("carol@example.com")
        admin.new_user("dave@example.com")
    here = Api(first).as_user("carol@example.com", "user-password-1")
    there = Api(second).as_user("dave@example.com", "user-password-1")
    session = shared_session(here, "dave@example.com")
    llm.script(final_reply("'Done.'"))
    with LiveReader(there, session["id"]) as daves:
        assert emails(daves.next("presence")) == ["dave@example.com"]
        with LiveReader(here, session["id"]) as carols:
            # Presence is shared: each replica sees the viewer of the other.
            assert emails(carols.next("presence")) == ["carol@example.com", "dave@example.com"]
            assert emails(daves.next("presence")) == ["carol@example.com", "dave@example.com"]
            with here.stream(
                "POST", f"/sessions/{session['id']}/query", json={"query": "Anything?"}
            ) as response:
                run_id = collect(response)[0].data["run_id"]
            assert daves.next("run.created")["run_id"] == run_id
    here.close()
    there.close()

"""A project's members (issue 26, point 1): owners add users by email with a role, change
and remove them; members see the project in their list with their role; a viewer reads
and changes nothing; the last owner cannot leave. On both stacks."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from app.api import sse
from tests.api.conftest import SALES
from tests.api.test_query import _start_in_background, _wait_for, ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sse import Event, read_into


def add(owner: Api, project: dict[str, Any], email: str, role: str) -> dict[str, Any]:
    response = owner.post(f"/projects/{project['id']}/members", json={"email": email, "role": role})
    assert response.status_code == 201, response.text
    return dict(response.json())


def me(api: Api) -> str:
    return str(api.get("/auth/me").json()["id"])


def test_an_owner_adds_members_who_then_see_the_project_with_their_role(
    alice: Api, bob: Api
) -> None:
    project = alice.project("Shared")
    assert project["role"] == "owner"
    member = add(alice, project, " Bob@Example.com ", "viewer")
    assert member["email"] == "bob@example.com" and member["role"] == "viewer"
    assert member["user_id"] == me(bob)
    listed = bob.get("/projects").json()
    assert [(p["name"], p["role"]) for p in listed["items"]] == [("Shared", "viewer")]
    assert bob.get(f"/projects/{project['id']}").json()["role"] == "viewer"
    members = alice.get(f"/projects/{project['id']}/members").json()
    assert [(m["email"], m["role"]) for m in members["items"]] == [
        ("alice@example.com", "owner"),
        ("bob@example.com", "viewer"),
    ]
    assert members["total"] == 2
    # Any member sees who else is in the project.
    assert bob.get(f"/projects/{project['id']}/members").json() == members


def test_members_are_listed_a_page_at_a_time_owners_first(admin: Api, alice: Api) -> None:
    """The list has the contract's shape, `{items, total}`, with `?limit=&offset=`."""
    project = alice.project("Paged")
    for name, role in [("dora", "viewer"), ("carl", "editor"), ("bea", "owner")]:
        admin.new_user(f"{name}@example.com")
        add(alice, project, f"{name}@example.com", role)
    path = f"/projects/{project['id']}/members"
    pages = [alice.get(path, params={"limit": 2, "offset": n}).json() for n in (0, 2, 4)]
    assert [p["total"] for p in pages] == [4, 4, 4]
    assert [[(m["email"], m["role"]) for m in p["items"]] for p in pages] == [
        [("alice@example.com", "owner"), ("bea@example.com", "owner")],
        [("carl@example.com", "editor"), ("dora@example.com", "viewer")],
        [],
    ]
    refused = alice.get(path, params={"limit": 0})
    assert refused.status_code == 422 and "limit" in refused.text


def test_a_viewer_reads_everything_and_changes_nothing(alice: Api, bob: Api) -> None:
    project = alice.project("Read only")
    uploaded = alice.upload(project["id"], "sales.csv", SALES).json()
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    add(alice, project, "bob@example.com", "viewer")
    assert bob.get(f"/files/{uploaded['id']}/preview").status_code == 200
    assert bob.get(f"/files/{uploaded['id']}/content").content == SALES
    assert bob.get(f"/sessions/{session['id']}").status_code == 200
    refused = [
        bob.upload(project["id"], "more.csv", SALES),
        bob.post(f"/sessions/{session['id']}/query", json={"query": "Hello?"}),
        bob.patch(f"/sessions/{session['id']}", json={"title": "Mine"}),
        bob.delete(f"/files/{uploaded['id']}"),
        bob.post(f"/projects/{project['id']}/sessions", json={"title": "Mine"}),
    ]
    for response in refused:
        assert response.status_code == 403, response.text
        assert response.json()["code"] == "forbidden_role"
        assert "You are a viewer of this project" in response.json()["detail"]
    # Nothing changed.
    assert [f["name"] for f in alice.get(f"/projects/{project['id']}/files").json()["items"]] == [
        "sales.csv"
    ]
    assert alice.get(f"/sessions/{session['id']}").json()["title"] == "S"


def test_an_editor_changes_things_but_not_members_budgets_or_the_project(
    alice: Api, bob: Api
) -> None:
    project = alice.project("Team")
    add(alice, project, "bob@example.com", "editor")
    assert bob.upload(project["id"], "sales.csv", SALES).status_code == 201
    assert bob.patch(f"/projects/{project['id']}", json={"name": "Team 2"}).status_code == 200
    for response in (
        bob.patch(f"/projects/{project['id']}", json={"budget_usd": 1000}),
        bob.post(
            f"/projects/{project['id']}/members", json={"email": "x@example.com", "role": "owner"}
        ),
        bob.delete(f"/projects/{project['id']}"),
    ):
        assert response.status_code == 403 and response.json()["code"] == "forbidden_role"
        assert response.json()["detail"].startswith("You are an editor of this project: an owner")
    assert alice.get(f"/projects/{project['id']}").json()["budget_usd"] is None


def test_roles_change_members_leave_and_the_last_owner_stays(
    alice: Api, bob: Api, admin: Api
) -> None:
    project = alice.project("Roles")
    add(alice, project, "bob@example.com", "viewer")
    bob_id, alice_id = me(bob), me(alice)
    promoted = alice.patch(f"/projects/{project['id']}/members/{bob_id}", json={"role": "owner"})
    assert promoted.status_code == 200 and promoted.json()["role"] == "owner"
    assert bob.get(f"/projects/{project['id']}").json()["role"] == "owner"
    # Two owners: one may leave; then the last one may not (nor be demoted).
    assert alice.delete(f"/projects/{project['id']}/members/{alice_id}").status_code == 204
    assert alice.get(f"/projects/{project['id']}").status_code == 404
    for response in (
        bob.delete(f"/projects/{project['id']}/members/{bob_id}"),
        bob.patch(f"/projects/{project['id']}/members/{bob_id}", json={"role": "editor"}),
    ):
        assert response.status_code == 409 and response.json()["code"] == "last_owner"
    # A member leaves by themselves; only an owner removes someone else.
    add(bob, project, "alice@example.com", "editor")
    carol = admin.new_user("carol@example.com")
    add(bob, project, "carol@example.com", "viewer")
    carol_id = me(carol)
    assert alice.delete(f"/projects/{project['id']}/members/{carol_id}").status_code == 403
    assert carol.delete(f"/projects/{project['id']}/members/{carol_id}").status_code == 204
    assert carol.get("/projects").json()["items"] == []


def test_adding_says_what_is_wrong(alice: Api, bob: Api) -> None:
    project = alice.project("Errors")
    base = f"/projects/{project['id']}/members"
    unknown = alice.post(base, json={"email": "nobody@example.com", "role": "viewer"})
    assert unknown.status_code == 404 and unknown.json()["code"] == "user_not_found"
    assert alice.post(base, json={"email": "not an email", "role": "viewer"}).status_code == 422
    assert alice.post(base, json={"email": "bob@example.com", "role": "boss"}).status_code == 422
    add(alice, project, "bob@example.com", "editor")
    again = alice.post(base, json={"email": "bob@example.com", "role": "viewer"})
    assert again.status_code == 409 and again.json()["code"] == "already_member"
    owner_again = alice.post(base, json={"email": "alice@example.com", "role": "viewer"})
    assert owner_again.status_code == 409


def test_a_disabled_user_loses_access_to_every_project_at_once(
    alice: Api, bob: Api, admin: Api
) -> None:
    project = alice.project("Gone")
    add(alice, project, "bob@example.com", "editor")
    assert bob.get(f"/projects/{project['id']}").status_code == 200
    assert admin.patch(f"/users/{me(bob)}", json={"disabled": True}).status_code == 200
    assert bob.get(f"/projects/{project['id']}").status_code == 401
    assert bob.get("/projects").status_code == 401


def test_runs_say_who_asked_and_members_what_they_spent(
    alice: Api, bob: Api, admin: Api, llm: ScriptedLLM
) -> None:
    project = alice.project("Together")
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    add(alice, project, "bob@example.com", "editor")
    llm.script(final_reply("'Two regions.'"))
    finished(ask(alice, session["id"], "How many regions?"))
    llm.script(code_reply("print(1 + 1)", "Add."), final_reply("'Two.'"))
    finished(ask(bob, session["id"], "One plus one?"))

    runs = bob.get(f"/sessions/{session['id']}/runs").json()["items"]
    asked = {r["query"]: r["asked_by"] for r in runs}
    assert asked == {
        "How many regions?": {"user_id": me(alice), "email": "alice@example.com"},
        "One plus one?": {"user_id": me(bob), "email": "bob@example.com"},
    }
    assert bob.get(f"/runs/{runs[0]['id']}").json()["asked_by"] == runs[0]["asked_by"]

    members = {
        m["email"]: m for m in alice.get(f"/projects/{project['id']}/members").json()["items"]
    }
    by_run = {r["asked_by"]["email"]: r for r in runs}
    for email in ("alice@example.com", "bob@example.com"):
        assert members[email]["runs"] == 1
        assert members[email]["tokens_in"] == by_run[email]["tokens_in"] > 0
        assert members[email]["tokens_out"] == by_run[email]["tokens_out"] > 0
    # Bob's question took two model calls, Alice's one.
    assert members["bob@example.com"]["tokens_in"] > members["alice@example.com"]["tokens_in"]
    total = alice.get(f"/projects/{project['id']}").json()
    assert total["tokens_in"] == sum(m["tokens_in"] for m in members.values())

    # A member who asked nothing has spent nothing; the administrators see who is where.
    admin.new_user("carol@example.com")
    add(alice, project, "carol@example.com", "viewer")
    members = {
        m["email"]: m for m in alice.get(f"/projects/{project['id']}/members").json()["items"]
    }
    assert (members["carol@example.com"]["runs"], members["carol@example.com"]["tokens_in"]) == (
        0,
        0,
    )
    alice.project("Alone")
    users = {u["email"]: u for u in admin.get("/users").json()["items"]}
    assert [(p["name"], p["role"]) for p in users["alice@example.com"]["projects"]] == [
        ("Alone", "owner"),
        ("Together", "owner"),
    ]
    assert [(p["name"], p["role"]) for p in users["bob@example.com"]["projects"]] == [
        ("Together", "editor")
    ]
    assert users["carol@example.com"]["projects"] == [
        {"id": project["id"], "name": "Together", "role": "viewer"}
    ]


def test_members_follow_a_run_live_an_editor_stops_it_and_removed_readers_are_cut_off(
    alice: Api, bob: Api, admin: Api, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sse, "RECHECK_SECONDS", 0.0)
    project = alice.project("Live")
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    carol, dave = admin.new_user("carol@example.com"), admin.new_user("dave@example.com")
    add(alice, project, "bob@example.com", "viewer")
    add(alice, project, "carol@example.com", "editor")
    add(alice, project, "dave@example.com", "viewer")
    llm.script(
        code_reply(
            "import time\nfor i in range(3000):\n"
            "    print('tick', i, flush=True)\n    time.sleep(0.1)"
        ),
        final_reply("'never'"),
    )
    asking, asked = _start_in_background(alice, session["id"], "A long one")
    _wait_for(lambda: any(e.event == "step.code" for e in asked), 60)
    run_id = asked[0].data["run_id"]

    # Others open the session mid-run and follow it from its first event.
    followers = {
        who: _follow(api, run_id) for who, api in (("bob", bob), ("carol", carol), ("dave", dave))
    }
    for _, seen in followers.values():
        _wait_for(lambda seen=seen: any(e.event == "step.output" for e in seen), 60)
        assert [e.event for e in seen][:1] == ["run.started"]

    # A viewer cannot stop it.
    refused = bob.post(f"/runs/{run_id}/cancel")
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"

    # Removing a member, or disabling a user, ends what they were following.
    assert alice.delete(f"/projects/{project['id']}/members/{me(bob)}").status_code == 204
    assert admin.patch(f"/users/{me(dave)}", json={"disabled": True}).status_code == 200
    for who in ("bob", "dave"):
        thread, seen = followers[who]
        thread.join(30)
        assert not thread.is_alive(), f"{who} still reads the run"
        assert "run.finished" not in [e.event for e in seen]
    assert alice.get(f"/runs/{run_id}").json()["status"] == "running"

    # An editor stops it; everyone still following sees it end.
    stopped = carol.post(f"/runs/{run_id}/cancel")
    assert stopped.status_code == 200 and stopped.json()["status"] == "cancelled"
    asking.join(30)
    carols_thread, carols = followers["carol"]
    carols_thread.join(30)
    for seen in (asked, carols):
        assert finished(seen)["status"] == "cancelled"
    # The log says who stopped it, and whose question it was.
    log = alice.get(f"/projects/{project['id']}/audit", params={"action": "run"}).json()
    said = [(e["action"], e["actor"]["email"], e["summary"]) for e in log["items"]]
    assert ("run.stopped", "carol@example.com", "carol@example.com stopped “A long one”.") in said
    assert ("run.asked", "alice@example.com") in [s[:2] for s in said]


def _follow(api: Api, run_id: str) -> tuple[threading.Thread, list[Event]]:
    seen: list[Event] = []

    def read() -> None:
        with api.stream("GET", f"/runs/{run_id}/events") as response:
            assert response.status_code == 200
            read_into(response, seen)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, seen

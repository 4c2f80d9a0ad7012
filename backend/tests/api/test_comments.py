"""Comments on answers and the notifications they make (issue 42, point 9): any member,
viewers included, comments and replies; the session's live stream carries each new one;
the project's owners and editors (not the author) are told; the author or an owner
deletes. The real API on both stacks, the scripted LLM over HTTP."""

from __future__ import annotations

from typing import Any

from tests.api.test_live import shared_session
from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.support.live import LiveReader
from tests.support.llm import ScriptedLLM, final_reply


def team_run(alice: Api, admin: Api, llm: ScriptedLLM) -> tuple[dict[str, Any], str, Api, Api]:
    """Alice's session (Bob an editor, Carol a viewer) with one answered run."""
    bob = admin.new_user("bob@example.com")
    carol = admin.new_user("carol@example.com")
    session = shared_session(alice, "bob@example.com")
    added = alice.post(
        f"/projects/{session['project_id']}/members",
        json={"email": "carol@example.com", "role": "viewer"},
    )
    assert added.status_code == 201, added.text
    llm.script(final_reply("'Revenue is 4490.75.'"))
    events = ask(alice, session["id"], "What is the revenue?")
    assert finished(events)["status"] == "succeeded"
    return session, events[0].data["run_id"], bob, carol


def unread(api: Api) -> int:
    return int(api.get("/notifications").json()["unread"])


def test_a_viewer_comments_a_teammate_replies_live_and_owners_and_editors_are_told(
    alice: Api, admin: Api, llm: ScriptedLLM
) -> None:
    session, run_id, bob, carol = team_run(alice, admin, llm)
    with LiveReader(bob, session["id"]) as bobs:
        made = carol.post(f"/runs/{run_id}/comments", json={"body": "  Is this net or gross?  "})
        assert made.status_code == 201, made.text
        comment = made.json()
        assert comment["body"] == "Is this net or gross?" and comment["reply_to"] is None
        assert comment["author"]["email"] == "carol@example.com"
        live = bobs.next("comment.created")
        assert live["run_id"] == run_id and live["comment"]["id"] == comment["id"]

        reply = bob.post(
            f"/runs/{run_id}/comments", json={"body": "Net.", "reply_to": comment["id"]}
        )
        assert reply.status_code == 201, reply.text
        assert bobs.next("comment.created")["comment"]["reply_to"] == comment["id"]

    thread = alice.get(f"/runs/{run_id}/comments").json()
    assert thread["total"] == 2
    assert [(c["body"], c["reply_to"]) for c in thread["items"]] == [
        ("Is this net or gross?", None),
        ("Net.", comment["id"]),
    ]
    # The owner is told of both, the editor of the viewer's only, the viewer of none.
    assert unread(alice) == 2 and unread(bob) == 1 and unread(carol) == 0
    told = alice.get("/notifications").json()["items"]
    assert [n["actor_email"] for n in told] == ["bob@example.com", "carol@example.com"]
    assert told[1]["run_id"] == run_id and told[1]["session_id"] == session["id"]
    assert told[1]["comment_id"] == comment["id"] and told[1]["text"] == "Is this net or gross?"

    one = alice.post("/notifications/read", json={"ids": [told[0]["id"]]}).json()
    assert one == {"marked": 1, "unread": 1}
    # Another's notification is passed over, not marked.
    assert bob.post("/notifications/read", json={"ids": [told[1]["id"]]}).json()["marked"] == 0
    assert alice.post("/notifications/read", json={}).json() == {"marked": 1, "unread": 0}
    assert alice.get("/notifications", params={"unread": True}).json()["total"] == 0

    audit = alice.get(f"/projects/{session['project_id']}/audit").json()["items"]
    said = [e["summary"] for e in audit if e["action"] == "comment.added"]
    assert said == [
        "bob@example.com replied “Net.”.",
        "carol@example.com commented “Is this net or gross?”.",
    ]


def test_the_author_or_an_owner_deletes_and_replies_go_with_it(
    alice: Api, admin: Api, llm: ScriptedLLM
) -> None:
    session, run_id, bob, carol = team_run(alice, admin, llm)
    first = carol.post(f"/runs/{run_id}/comments", json={"body": "First"}).json()
    bob.post(f"/runs/{run_id}/comments", json={"body": "Reply", "reply_to": first["id"]})
    second = bob.post(f"/runs/{run_id}/comments", json={"body": "Second"}).json()

    refused = bob.delete(f"/comments/{first['id']}")  # an editor, not its author
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"
    with LiveReader(bob, session["id"]) as bobs:
        assert carol.delete(f"/comments/{first['id']}").status_code == 204
        gone = bobs.next("comment.deleted")
        assert gone["comment_id"] == first["id"] and gone["run_id"] == run_id
    assert [c["body"] for c in alice.get(f"/runs/{run_id}/comments").json()["items"]] == ["Second"]
    assert alice.delete(f"/comments/{second['id']}").status_code == 204  # an owner
    assert alice.get(f"/runs/{run_id}/comments").json()["total"] == 0
    assert alice.delete(f"/comments/{second['id']}").status_code == 404
    # The deleted comments' notifications went with them.
    assert alice.get("/notifications").json()["total"] == 0


def test_bad_comments_are_refused_and_strangers_see_nothing(
    alice: Api, admin: Api, llm: ScriptedLLM
) -> None:
    session, run_id, bob, _ = team_run(alice, admin, llm)
    for body, why in (
        ({"body": ""}, "empty"),
        ({"body": "   "}, "blank"),
        ({"body": "x" * 4001}, "too long"),
        ({"body": "ring\x07the bell"}, "a control character"),
        ({"body": "abc\u202edcba"}, "a bidirectional override"),
        ({}, "no body"),
    ):
        refused = bob.post(f"/runs/{run_id}/comments", json=body)
        assert refused.status_code == 422, why
        assert refused.json()["detail"] and refused.json()["code"], why
    assert (
        bob.post(f"/runs/{run_id}/comments", json={"body": "two\nlines\tand a tab"}).status_code
        == 201
    )

    llm.script(final_reply("'Other.'"))
    other_run = ask(alice, session["id"], "Another question?")[0].data["run_id"]
    elsewhere = alice.post(f"/runs/{other_run}/comments", json={"body": "On the other run"}).json()
    crossed = bob.post(f"/runs/{run_id}/comments", json={"body": "x", "reply_to": elsewhere["id"]})
    assert crossed.status_code == 400 and crossed.json()["code"] == "reply_to_not_in_run"

    with admin.new_user("eve@example.com") as eve:
        assert eve.get(f"/runs/{run_id}/comments").status_code == 404
        assert eve.post(f"/runs/{run_id}/comments", json={"body": "hi"}).status_code == 404
        assert eve.delete(f"/comments/{elsewhere['id']}").status_code == 404
        assert eve.get("/notifications").json() == {"items": [], "total": 0, "unread": 0}

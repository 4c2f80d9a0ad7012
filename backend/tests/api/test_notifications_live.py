"""Notifications live, per user (issue 42, points 7 and 9): a comment reaches the bell of each
owner and editor told of it through their own stream (GET /notifications/live), never a
timer and never anyone else's; marking read in one tab clears the others; the stream
resumes with Last-Event-ID, is bounded with the sessions' live streams, ends when its token
no longer holds, and crosses replicas. The real API on both stacks, the scripted LLM."""

from __future__ import annotations

from typing import Any

from tests.api.test_comments import team_run
from tests.api.test_live import shared_session
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api
from tests.redteam.test_web_attacks import api_token, bearer
from tests.support.live import WAIT_SECONDS, InboxReader, LiveReader, emails, until_closed
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer
from tests.support.sse import collect


def ended(reader: LiveReader) -> list[tuple[str, dict[str, Any]]]:
    """Wait for the server to end the stream; the events it carried before."""
    rest = []
    while (item := reader.events.get(timeout=WAIT_SECONDS)) is not None:
        rest.append(item)
    return rest


def test_a_comment_reaches_its_recipients_only_and_reading_clears_every_tab(
    alice: Api, admin: Api, llm: ScriptedLLM
) -> None:
    session, run_id, bob, carol = team_run(alice, admin, llm)
    with InboxReader(alice) as tab_one, InboxReader(alice) as tab_two, InboxReader(carol) as cs:
        made = bob.post(f"/runs/{run_id}/comments", json={"body": "Is this net?"})
        assert made.status_code == 201, made.text
        listed = alice.get("/notifications").json()
        created = tab_one.next("notification.created")["notification"]
        # The notification as the list gives it, in both of Alice's tabs.
        assert created == listed["items"][0] and listed["unread"] == 1
        assert created["actor_email"] == "bob@example.com" and created["text"] == "Is this net?"
        assert created["comment_id"] == made.json()["id"] and created["session_id"] == session["id"]
        assert tab_two.next("notification.created")["notification"] == created
        created_id = tab_one.ids[-1]
        assert created_id

        # Carol, a viewer, is told of nothing: the first event of her stream is her own read.
        assert carol.post("/notifications/read", json={}).json() == {"marked": 0, "unread": 0}
        assert cs.next("notification.read") == {"ids": None, "marked": 0, "unread": 0}
        assert [name for name, _ in cs.seen] == ["notification.read"]

        # Read in one tab, the other's count clears.
        done = alice.post("/notifications/read", json={"ids": [created["id"]]})
        assert done.json() == {"marked": 1, "unread": 0}
        assert tab_two.next("notification.read") == {
            "ids": [created["id"]],
            "marked": 1,
            "unread": 0,
        }
        # Bob's own comment tells Bob nothing; his stream opened after it carries only what
        # comes after: Carol's comment (he edits the project).
        with InboxReader(bob) as bobs:
            carol.post(f"/runs/{run_id}/comments", json={"body": "Gross, I think."})
            told = bobs.next("notification.created")["notification"]
            assert told["actor_email"] == "carol@example.com"
            assert [name for name, _ in bobs.seen] == ["notification.created"]

    # A tab that reconnects with Last-Event-ID gets what came after that event, not before.
    with InboxReader(alice, headers={"Last-Event-ID": created_id}) as back:
        assert back.next("notification.read")["ids"] == [created["id"]]
        assert back.next("notification.created")["notification"]["text"] == "Gross, I think."
        assert [name for name, _ in back.seen] == ["notification.read", "notification.created"]
    # A Last-Event-ID that is none of the feed's starts from now.
    with InboxReader(alice, headers={"Last-Event-ID": "not-an-id"}) as fresh:
        alice.post("/notifications/read", json={})
        assert fresh.next("notification.read")["marked"] == 1
        assert [name for name, _ in fresh.seen] == ["notification.read"]


def test_the_stream_needs_a_good_token_and_ends_when_it_is_revoked(
    alice: Api, anon: Api, live: LiveServer
) -> None:
    refused = anon.get("/notifications/live")
    assert refused.status_code == 401 and refused.json()["code"]
    assert anon.get("/notifications/live", headers=bearer("wb_not-a-token")).status_code == 401
    token = api_token(alice)
    revoked_id = alice.get("/auth/tokens").json()["items"][0]["id"]
    inbox = live.state.inbox
    recheck, heartbeat = inbox.recheck_seconds, inbox.heartbeat_seconds
    inbox.recheck_seconds, inbox.heartbeat_seconds = 0.0, 0.05
    try:
        with Api(live, token) as script, InboxReader(script) as open_stream:
            assert alice.delete(f"/auth/tokens/{revoked_id}").status_code == 204
            # The server ends the stream at its next check: the token no longer holds.
            assert ended(open_stream) == []
            again = script.get("/notifications/live")
            assert again.status_code == 401 and again.json()["code"] == "invalid_token"
    finally:
        inbox.recheck_seconds, inbox.heartbeat_seconds = recheck, heartbeat


def test_notification_streams_share_the_live_streams_bounds(
    alice: Api, admin: Api, live: LiveServer
) -> None:
    project = alice.project()
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "One"}).json()
    slots = live.state.live.slots
    assert live.state.inbox.slots is slots
    per_user = slots.per_user
    slots.per_user = 1
    try:
        with LiveReader(alice, session["id"]) as open_session:
            assert emails(open_session.next("presence")) == ["alice@example.com"]
            full = alice.get("/notifications/live")
            assert full.status_code == 503 and full.json()["code"] == "too_many_streams"
            assert int(full.headers["Retry-After"]) > 0
        until_closed(slots)
        with InboxReader(alice):
            refused = alice.get(f"/sessions/{session['id']}/live")
            assert refused.status_code == 503 and refused.json()["code"] == "too_many_streams"
        until_closed(slots)
    finally:
        slots.per_user = per_user


def test_a_comment_on_one_replica_reaches_the_bell_on_another(
    two_instances: tuple[LiveServer, LiveServer], llm: ScriptedLLM
) -> None:
    first, second = two_instances
    with Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        admin.new_user("carol@example.com")
        admin.new_user("dave@example.com")
    here = Api(first).as_user("carol@example.com", "user-password-1")
    there = Api(second).as_user("dave@example.com", "user-password-1")
    session = shared_session(here, "dave@example.com")
    with here.stream(
        "POST", f"/sessions/{session['id']}/cells", json={"language": "python", "code": "x = 1"}
    ) as response:
        run_id = collect(response)[0].data["run_id"]
    with InboxReader(there) as daves:
        made = here.post(f"/runs/{run_id}/comments", json={"body": "From replica one"})
        assert made.status_code == 201, made.text
        told = daves.next("notification.created")["notification"]
        assert told["text"] == "From replica one" and told["actor_email"] == "carol@example.com"
        assert there.get("/notifications").json()["items"][0] == told
    here.close()
    there.close()

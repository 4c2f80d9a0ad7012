"""Read-only links to a session's report (issue 26, point 3), on both stacks: a link shows
the report to a client with no login, holds the runs it was made with (a question asked
later never shows), and opens nothing once revoked, expired, or its session deleted.
The attacks on links are in tests/redteam/test_share_attacks.py."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import update

from app.models import Share
from app.models.base import utcnow
from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply
from tests.support.server import LiveServer


def answered(api: Api, llm: ScriptedLLM, session_id: str, query: str, answer: str) -> str:
    """Ask a question the scripted model answers with `answer`; the run's id."""
    llm.script(final_reply(repr(answer)))
    events = ask(api, session_id, query)
    assert finished(events)["status"] == "succeeded", events
    return str(events[0].data["run_id"])


def share(api: Api, session_id: str, **body: Any) -> dict[str, Any]:
    response = api.post(f"/sessions/{session_id}/shares", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def opened(url: str) -> httpx.Response:
    """The link as anyone opens it: no login, no cookie, nothing but the URL."""
    return httpx.get(url, timeout=60)


def shares_of(api: Api, session_id: str) -> list[dict[str, Any]]:
    response = api.get(f"/sessions/{session_id}/shares")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def expire(live: LiveServer, share_id: str) -> None:
    """Move a link's end into the past (as the days going by would)."""

    async def past() -> None:
        async with live.state.session_factory() as db:
            ended = utcnow() - timedelta(seconds=1)
            await db.execute(
                update(Share).where(Share.id == uuid.UUID(share_id)).values(expires_at=ended)
            )
            await db.commit()

    live.call(past())


def test_a_link_shows_the_report_without_login_until_it_is_revoked(
    live: LiveServer, alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    first = answered(alice, llm, session["id"], "Who leads?", "North leads with 2510.75.")
    made = share(alice, session["id"])
    assert set(made) == {"id", "url", "token", "expires_at"}
    assert made["url"] == f"{live.url}/api/v1/shared/{made['token']}"
    assert len(made["token"]) >= 43 and re.fullmatch(r"[A-Za-z0-9_-]+", made["token"])
    expires = datetime.fromisoformat(made["expires_at"])
    assert timedelta(days=29) < expires - datetime.now(UTC) <= timedelta(days=30)

    page = opened(made["url"])
    assert page.status_code == 200, page.text
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "North leads with 2510.75." in page.text and "Who leads?" in page.text
    assert page.headers["cache-control"] == "no-store"
    assert "sandbox" in page.headers["content-security-policy"]

    # A question asked after the link was made is not in it.
    answered(alice, llm, session["id"], "And the south?", "South trails with 1980.")
    page = opened(made["url"])
    assert "North leads" in page.text and "South trails" not in page.text
    assert "And the south?" not in page.text and "1 question" in page.text

    listed = shares_of(alice, session["id"])
    assert [s["id"] for s in listed] == [made["id"]]
    assert "token" not in listed[0] and "url" not in listed[0]
    assert listed[0]["runs"] == [first] and listed[0]["active"] is True
    assert listed[0]["created_by"]["email"] == "alice@example.com"
    assert listed[0]["revoked_at"] is None and listed[0]["session_id"] == session["id"]

    assert alice.delete(f"/shares/{made['id']}").status_code == 204
    gone = opened(made["url"])
    assert gone.status_code == 404 and gone.json()["code"] == "share_not_found"
    # Exactly what a link that never existed answers.
    assert gone.text == opened(f"{live.url}/api/v1/shared/{'A' * 43}").text
    # Someone who clicks it in a browser reads a page that says so, nothing else in it.
    clicked = httpx.get(made["url"], headers={"Accept": "text/html,*/*;q=0.8"}, timeout=30)
    assert clicked.status_code == 404
    assert clicked.headers["content-type"] == "text/html; charset=utf-8"
    assert "This shared report is not available" in clicked.text
    assert "may have expired or been revoked" in clicked.text
    assert (
        "script" not in clicked.text
        and "default-src 'none'" in clicked.headers["content-security-policy"]
    )
    never = f"{live.url}/api/v1/shared/{'B' * 43}"
    assert httpx.get(never, headers={"Accept": "text/html"}, timeout=30).text == clicked.text
    assert alice.delete(f"/shares/{made['id']}").status_code == 204  # again: no error
    revoked = shares_of(alice, session["id"])[0]
    assert revoked["active"] is False and revoked["revoked_at"] is not None


def test_a_link_holds_the_runs_chosen_of_its_own_session(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    answered(alice, llm, session["id"], "Who leads?", "North leads.")
    second = answered(alice, llm, session["id"], "Who trails?", "South trails.")
    made = share(alice, session["id"], runs=[second], expires_in_days=2)
    page = opened(made["url"])
    assert "South trails." in page.text and "North leads." not in page.text
    assert "Who leads?" not in page.text
    expires = datetime.fromisoformat(made["expires_at"])
    assert timedelta(days=1) < expires - datetime.now(UTC) <= timedelta(days=2)

    other = alice.post(f"/projects/{session['project_id']}/sessions", json={"title": "Other"})
    foreign = answered(alice, llm, other.json()["id"], "Elsewhere?", "Elsewhere.")
    path = f"/sessions/{session['id']}/shares"
    refused = alice.post(path, json={"runs": [second, foreign]})
    assert refused.status_code == 422 and refused.json()["code"] == "unknown_run"
    assert foreign in refused.json()["detail"]
    assert alice.post(path, json={"runs": []}).json()["code"] == "unknown_run"
    for days in (0, 366):
        assert alice.post(path, json={"expires_in_days": days}).status_code == 422
    empty = alice.post(f"/projects/{session['project_id']}/sessions", json={"title": "Empty"})
    nothing = alice.post(f"/sessions/{empty.json()['id']}/shares", json={})
    assert nothing.status_code == 422 and nothing.json()["code"] == "nothing_to_share"
    # The refused ones made no link.
    assert len(shares_of(alice, session["id"])) == 1


def test_a_link_opens_nothing_once_expired_or_its_session_or_project_is_deleted(
    live: LiveServer, alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    answered(alice, llm, session["id"], "Who leads?", "North leads.")
    expiring, kept = share(alice, session["id"]), share(alice, session["id"])
    expire(live, expiring["id"])
    assert opened(expiring["url"]).status_code == 404
    assert [s["active"] for s in shares_of(alice, session["id"])] == [True, False]
    assert opened(kept["url"]).status_code == 200
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204
    assert opened(kept["url"]).status_code == 404

    other = alice.post(f"/projects/{session['project_id']}/sessions", json={"title": "Next"})
    answered(alice, llm, other.json()["id"], "Still here?", "Yes.")
    last = share(alice, other.json()["id"])
    assert opened(last["url"]).status_code == 200
    assert alice.delete(f"/projects/{session['project_id']}").status_code == 204
    assert opened(last["url"]).status_code == 404


def test_the_link_is_made_on_the_public_url_when_one_is_set(
    live: LiveServer, alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    answered(alice, llm, session["id"], "Who leads?", "North leads.")
    settings = live.settings
    settings.PUBLIC_URL = "https://workbench.example.com/team"
    try:
        made = share(alice, session["id"])
    finally:
        settings.PUBLIC_URL = None
    assert made["url"] == f"https://workbench.example.com/team/api/v1/shared/{made['token']}"


def test_the_report_shows_each_question_once(alice: Api, llm: ScriptedLLM) -> None:
    # The browser names a new session after its first question: the report's heading must
    # not repeat it above the question itself.
    project = alice.project("Regions")
    question = "Which region leads in revenue?"
    made = alice.post(f"/projects/{project['id']}/sessions", json={"title": question})
    session_id = made.json()["id"]
    answered(alice, llm, session_id, question, "North leads with 2510.75.")
    answered(alice, llm, session_id, "And the south?", "South trails with 1980.")
    page = opened(share(alice, session_id)["url"])
    exported = alice.get(f"/sessions/{session_id}/export", params={"format": "html"})
    markdown = alice.get(f"/sessions/{session_id}/export", params={"format": "md"}).text
    for html in (page.text, exported.text):
        body = html.split("<body>", 1)[1]
        assert body.count(question) == 1 and body.count("And the south?") == 1
        assert re.search(r"<h1>\s*Regions\s*</h1>", body), "the project heads the report"
    assert markdown.count(question) == 1 and markdown.startswith("# Regions\n")

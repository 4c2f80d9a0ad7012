"""A project's audit log (issue 26, point 4), on both stacks: what its owner, an editor and
a viewer did through the API, read back by the owner with who did it, what and a sentence
that says so; only owners read it; it outlives the project and, on PostgreSQL, refuses to be
changed."""

from __future__ import annotations

import re
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from app.auth import security
from app.models import AuditEvent
from tests.api.conftest import SALES
from tests.api.test_asking import ASK, ask_until_waiting, follow
from tests.api.test_query import ask, finished
from tests.api.test_review import ask_until_approval, in_review
from tests.api.test_sources import reachable  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

ALICE, BOB, CAROL = "alice@example.com", "bob@example.com", "carol@example.com"
LONG_QUESTION = "Net or gross? " + "Say which revenue you mean, please. " * 10


def log_of(api: Api, project_id: str, **params: Any) -> dict[str, Any]:
    response = api.get(f"/projects/{project_id}/audit", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


def added(owner: Api, project_id: str, email: str, role: str) -> None:
    response = owner.post(f"/projects/{project_id}/members", json={"email": email, "role": role})
    assert response.status_code == 201, response.text


def test_the_owner_reads_what_each_member_did(
    admin: Api,
    alice: Api,
    bob: Api,
    llm: ScriptedLLM,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    carol = admin.new_user(CAROL)
    project = alice.project("Sales")
    pid = project["id"]
    added(alice, pid, BOB, "editor")
    added(alice, pid, CAROL, "viewer")
    assert bob.upload(pid, "sales data.csv", SALES).status_code == 201
    replaced = bob.upload(pid, "sales data.csv", SALES + b"East,2026-03,10\n")
    assert replaced.status_code == 201
    source = alice.post(
        f"/projects/{pid}/sources", json={"name": "lite", "url": f"sqlite:///{source_files[0]}"}
    ).json()
    described = bob.patch(f"/sources/{source['id']}", json={"description": "Orders"})
    assert described.status_code == 200, described.text
    session = bob.post(f"/projects/{pid}/sessions", json={"title": "Q1"}).json()

    # A question in review mode: the viewer may not approve its code, the editor does.
    in_review(bob, session)
    llm.script(code_reply("print(1 + 1)"), final_reply("'Two.'"))
    request = ask_until_approval(bob, session["id"], "Total revenue?")[-1]
    run_id = request.data["run_id"]
    refused = carol.post(f"/runs/{run_id}/approval", json={"decision": "approve"})
    assert refused.status_code == 403
    assert bob.post(f"/runs/{run_id}/approval", json={"decision": "approve"}).status_code == 200
    assert finished(follow(bob, run_id, request.id))["status"] == "succeeded"
    # A question the agent asks back, answered.
    assert bob.patch(f"/sessions/{session['id']}", json={"autonomy": "auto"}).status_code == 200
    llm.script(ASK, final_reply("f'{kind} revenue it is.'"))
    waiting = ask_until_waiting(bob, session["id"], LONG_QUESTION)[-1]
    answer = bob.post(f"/runs/{waiting.data['run_id']}/input", json={"answer": "Net"})
    assert answer.status_code == 200, answer.text
    assert finished(follow(bob, waiting.data["run_id"], waiting.id))["status"] == "succeeded"

    exported = carol.get(f"/sessions/{session['id']}/export", params={"format": "html"})
    assert exported.status_code == 200
    assert carol.upload(pid, "mine.csv", SALES).status_code == 403  # refused: not logged
    shared = bob.post(f"/sessions/{session['id']}/shares", json={}).json()
    assert alice.delete(f"/shares/{shared['id']}").status_code == 204
    assert (
        alice.patch(
            f"/projects/{pid}/members/{carol.get('/auth/me').json()['id']}", json={"role": "editor"}
        ).status_code
        == 200
    )
    assert alice.patch(f"/projects/{pid}", json={"budget_usd": 5}).status_code == 200
    assert bob.patch(f"/projects/{pid}", json={"name": "Sales 2026"}).status_code == 200
    assert carol.delete(f"/files/{replaced.json()['id']}").status_code == 204
    assert alice.delete(f"/sources/{source['id']}").status_code == 204
    assert bob.delete(f"/sessions/{session['id']}").status_code == 204
    bob_id = bob.get("/auth/me").json()["id"]
    assert alice.delete(f"/projects/{pid}/members/{bob_id}").status_code == 204

    log = log_of(alice, pid)
    events = list(reversed(log["items"]))  # oldest first, to read along the story
    assert log["total"] == len(events) == 26
    said = [(e["actor"]["email"], e["action"], e["summary"]) for e in events]
    size, grown = f"{len(SALES)} bytes", f"{len(SALES) + 16} bytes"
    until = shared["expires_at"][:10]
    ended = r"(\d[\d,]*) tokens in, (\d[\d,]*) out, (no price known|\$[\d.,]+)"
    expected = [
        (ALICE, "project.created", f"{ALICE} created the project “Sales”."),
        (ALICE, "member.added", f"{ALICE} added {BOB} as editor."),
        (ALICE, "member.added", f"{ALICE} added {CAROL} as viewer."),
        (BOB, "file.uploaded", f"{BOB} uploaded sales data.csv ({size})."),
        (BOB, "file.replaced", f"{BOB} uploaded version 2 of sales data.csv ({grown})."),
        (ALICE, "source.added", f"{ALICE} added the data source lite (sqlite)."),
        (BOB, "source.changed", f"{BOB} changed the data source lite: description."),
        (BOB, "session.created", f"{BOB} opened the session “Q1”."),
        (
            BOB,
            "session.autonomy_changed",
            f"{BOB} set the session “Q1” to review code before it runs (it was run code at once).",
        ),
        (BOB, "run.asked", f"{BOB} asked “Total revenue?” with openai/scripted."),
        (BOB, "review.decided", f"{BOB} approved the code of step 1."),
        (BOB, "run.ended", re.compile(rf"{BOB}'s question ended succeeded \({ended}\)\.")),
        (
            BOB,
            "session.autonomy_changed",
            f"{BOB} set the session “Q1” to run code at once (it was review code before it runs).",
        ),
        (BOB, "run.asked", f"{BOB} asked “{LONG_QUESTION[:79].rstrip()}…” with openai/scripted."),
        (BOB, "input.answered", f"{BOB} answered the agent's question at step 1."),
        (BOB, "run.ended", re.compile(rf"{BOB}'s question ended succeeded \({ended}\)\.")),
        (CAROL, "export.downloaded", f"{CAROL} downloaded the session “Q1” as html."),
        (
            BOB,
            "share.created",
            f"{BOB} shared 2 questions of the session “Q1” by a link until {until}.",
        ),
        (ALICE, "share.revoked", f"{ALICE} revoked a shared link to the session “Q1”."),
        (ALICE, "member.changed", f"{ALICE} made {CAROL} editor (they were viewer)."),
        (
            ALICE,
            "project.budget_changed",
            f"{ALICE} set the project's budget to $5.00 (it was none).",
        ),
        (BOB, "project.updated", f"{BOB} renamed the project from “Sales” to “Sales 2026”."),
        (CAROL, "file.deleted", f"{CAROL} deleted the file sales data.csv."),
        (ALICE, "source.deleted", f"{ALICE} deleted the data source lite."),
        (BOB, "session.deleted", f"{BOB} deleted the session “Q1”."),
        (ALICE, "member.removed", f"{ALICE} removed {BOB} (they were editor)."),
    ]
    assert len(said) == len(expected)
    for got, (email, action, summary) in zip(said, expected, strict=True):
        assert got[:2] == (email, action), got
        if isinstance(summary, re.Pattern):
            assert summary.fullmatch(got[2]), got
        else:
            assert got[2] == summary, got

    by_action = {e["action"]: e for e in events}
    asked = [e for e in events if e["action"] == "run.asked"]
    assert asked[0]["detail"]["run_id"] == run_id == asked[0]["subject_id"]
    assert asked[0]["detail"]["model"] == "openai/scripted"
    assert asked[1]["detail"]["query"] == LONG_QUESTION[:200]
    spent = next(e["detail"] for e in events if e["action"] == "run.ended")
    run = bob.get(f"/runs/{run_id}")  # gone with its session: the log still says what it cost
    assert run.status_code == 404 and spent["run_id"] == run_id and spent["tokens_in"] > 0
    assert set(spent) == {"run_id", "status", "tokens_in", "tokens_out", "cost_usd"}
    assert by_action["review.decided"]["detail"] == {
        "run_id": run_id,
        "step": 1,
        "decision": "approve",
    }
    assert by_action["export.downloaded"]["detail"]["format"] == "html"
    assert by_action["member.added"]["subject_type"] == "member"
    assert by_action["share.created"]["subject_id"] == shared["id"]
    # No value of a source's URL or password is logged, only which fields changed.
    assert by_action["source.changed"]["detail"]["fields"] == ["description"]
    assert str(source_files[0]) not in str(log)


def test_only_owners_read_the_log_a_page_and_an_action_at_a_time(
    admin: Api, alice: Api, bob: Api
) -> None:
    carol, dave = admin.new_user(CAROL), admin.new_user("dave@example.com")
    pid = alice.project("Log")["id"]
    added(alice, pid, BOB, "editor")
    added(alice, pid, CAROL, "viewer")
    for api in (bob, carol):
        refused = api.get(f"/projects/{pid}/audit")
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"
    assert dave.get(f"/projects/{pid}/audit").status_code == 404

    members = log_of(alice, pid, action="member")
    assert members["total"] == 2 and [e["detail"]["email"] for e in members["items"]] == [
        CAROL,
        BOB,
    ]
    assert log_of(alice, pid, action="member.added")["total"] == 2
    assert log_of(alice, pid, action="member.removed") == {"items": [], "total": 0}
    assert log_of(alice, pid, action="%")["total"] == 0  # no pattern: a name or a family
    page = log_of(alice, pid, limit=1, offset=1)
    assert page["total"] == 3 and [e["action"] for e in page["items"]] == ["member.added"]
    assert page["items"][0]["detail"]["email"] == BOB
    assert page["items"][0]["actor"] == {
        "user_id": alice.get("/auth/me").json()["id"],
        "email": ALICE,
    }


def test_the_log_outlives_its_project_and_the_database_refuses_changes(
    live: LiveServer, alice: Api
) -> None:
    project = alice.project("Gone")
    assert alice.delete(f"/projects/{project['id']}").status_code == 204
    assert alice.get(f"/projects/{project['id']}/audit").status_code == 404

    async def kept() -> list[AuditEvent]:
        async with live.state.session_factory() as db:
            rows = await db.scalars(
                select(AuditEvent)
                .where(AuditEvent.project_id == uuid.UUID(project["id"]))
                .order_by(AuditEvent.at)
            )
            return list(rows)

    events = live.call(kept())
    assert [e.action for e in events] == ["project.created", "project.deleted"]
    assert events[-1].summary == f"{ALICE} deleted the project “Gone”."
    if live.state.engine.dialect.name != "postgresql":
        return

    async def change(statement: str) -> None:
        async with live.state.engine.begin() as conn:
            await conn.execute(text(statement), {"id": events[0].id})

    for statement in (
        "UPDATE audit_events SET summary = 'nothing happened' WHERE id = :id",
        "DELETE FROM audit_events WHERE id = :id",
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            live.call(change(statement))
    assert [e.summary for e in live.call(kept())] == [e.summary for e in events]


def test_renames_autonomy_downloads_and_opened_links_are_logged(
    alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    """What a compliance reader asks of a log: who renamed a session or let its code run
    unreviewed, who took a file's bytes (any version) or a session's export, and that a
    shared link was opened (by the link's id, never its token; a refresh storm is one event
    an hour)."""
    pid = alice.project("Ledger")["id"]
    added(alice, pid, BOB, "viewer")
    uploaded = alice.upload(pid, "sales.csv", SALES).json()
    assert alice.upload(pid, "sales.csv", SALES + b"East,2026-03,10\n").status_code == 201
    session = alice.post(f"/projects/{pid}/sessions", json={"title": "Draft"}).json()
    renamed = alice.patch(f"/sessions/{session['id']}", json={"title": "Final"})
    assert renamed.status_code == 200
    assert alice.patch(f"/sessions/{session['id']}", json={"title": "Final"}).status_code == 200
    assert alice.patch(f"/sessions/{session['id']}", json={"autonomy": "review"}).status_code == 200
    assert bob.get(f"/files/{uploaded['id']}/content").status_code == 200
    assert bob.get(f"/files/{uploaded['id']}/versions/1/content").status_code == 200
    assert alice.patch(f"/sessions/{session['id']}", json={"autonomy": "auto"}).status_code == 200
    llm.script(final_reply("'Done.'"))
    assert finished(ask(alice, session["id"], "Anything?"))["status"] == "succeeded"
    link = alice.post(f"/sessions/{session['id']}/shares", json={}).json()
    for _ in range(3):
        assert httpx.get(link["url"], timeout=60).status_code == 200

    log = log_of(alice, pid)
    said = [
        (e["action"], e["summary"])
        for e in reversed(log["items"])
        if e["action"].startswith(("session.", "file.downloaded", "share.opened"))
    ]
    grown = f"{len(SALES) + 16} bytes"
    assert said == [
        ("session.created", f"{ALICE} opened the session “Draft”."),
        ("session.renamed", f"{ALICE} renamed the session “Draft” to “Final”."),
        (
            "session.autonomy_changed",
            f"{ALICE} set the session “Final” to review code before it runs "
            "(it was run code at once).",
        ),
        ("file.downloaded", f"{BOB} downloaded sales.csv ({grown})."),
        ("file.downloaded", f"{BOB} downloaded sales.csv (version 1) ({len(SALES)} bytes)."),
        (
            "session.autonomy_changed",
            f"{ALICE} set the session “Final” to run code at once "
            "(it was review code before it runs).",
        ),
        (
            "share.opened",
            f"A shared link to the session “Final” was opened (made by {ALICE}; "
            "one event an hour at most).",
        ),
    ]
    opened = next(e for e in log["items"] if e["action"] == "share.opened")
    assert opened["actor"] is None and opened["subject_id"] == link["id"]
    assert opened["detail"]["share_id"] == link["id"]
    assert link["token"] not in str(log) and security.hash_token(link["token"]) not in str(log)
    assert alice.get(f"/projects/{pid}/audit/verify").json()["intact"] is True


def test_events_written_at_once_never_fork_the_chain(alice: Api, bob: Api) -> None:
    """Twelve changes made at the same moment by two members each take the next number of
    the project's chain: none is refused, and the chain verifies with every one of them."""
    pid = alice.project("Busy")["id"]
    added(alice, pid, BOB, "editor")
    sessions = [
        alice.post(f"/projects/{pid}/sessions", json={"title": f"S{n}"}).json() for n in range(6)
    ]
    go = threading.Barrier(12)

    def rename(api: Api, session: dict[str, Any], title: str) -> int:
        go.wait()
        return api.patch(f"/sessions/{session['id']}", json={"title": title}).status_code

    with ThreadPoolExecutor(12) as pool:
        done = [
            pool.submit(rename, api, session, f"{session['title']} by {name}")
            for session in sessions
            for api, name in ((alice, "a"), (bob, "b"))
        ]
        assert [f.result() for f in done] == [200] * 12
    total = log_of(alice, pid)["total"]
    assert total == 2 + 6 + 12
    verdict = alice.get(f"/projects/{pid}/audit/verify").json()
    assert verdict["intact"] is True and verdict["events"] == total, verdict

"""Search (issue 42, point 8): sessions' titles, questions, answers, code and artifact names
of the projects a user is a member of, in the database's own full-text search (both
stacks: PostgreSQL's text search, SQLite's FTS5), hits marked, paged."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import SALES
from tests.api.test_query import READ, ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply


def answered_session(api: Api, llm: ScriptedLLM, title: str = "Quarterly review") -> dict[str, Any]:
    project = api.project("Finance")
    assert api.upload(project["id"], "sales data.csv", SALES).status_code == 201
    session = api.post(f"/projects/{project['id']}/sessions", json={"title": title}).json()
    llm.script(
        code_reply(f"{READ}\ndf.groupby('region').sum().to_csv('forecast-by-region.csv')"),
        final_reply("'Northern revenue grew fastest.'"),
    )
    events = ask(api, session["id"], "Which region's revenue grew the most?")
    assert finished(events)["status"] == "succeeded"
    return {**session, "run_id": events[0].data["run_id"]}


def hits(api: Api, q: str, **params: Any) -> dict[str, Any]:
    response = api.get("/search", params={"q": q, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_search_finds_questions_answers_code_titles_and_artifacts_marked(
    alice: Api, llm: ScriptedLLM
) -> None:
    session = answered_session(alice, llm)
    found = hits(alice, "revenue")
    kinds = {h["kind"]: h for h in found["items"]}
    # The final step's code (final_answer('…revenue…')) holds the word too.
    assert set(kinds) == {"question", "answer", "code"}, found
    assert found["total"] == 3
    question = kinds["question"]
    assert question["session_id"] == session["id"] and question["run_id"] == session["run_id"]
    assert question["project_id"] == session["project_id"]
    assert question["title"] == "Quarterly review"
    assert "<mark>revenue</mark>" in question["snippet"]
    assert "<mark>revenue</mark>" in kinds["answer"]["snippet"]

    artifact = hits(alice, "forecast")["items"]
    assert [(h["kind"], h["run_id"]) for h in artifact if h["kind"] == "artifact"] == [
        ("artifact", session["run_id"])
    ]
    assert any(h["kind"] == "code" and "groupby" in h["snippet"] for h in artifact)
    titled = hits(alice, "quarterly")["items"]
    assert [(h["kind"], h["run_id"]) for h in titled] == [("session", None)]

    # A renamed session is found by its new title, not its old one.
    alice.patch(f"/sessions/{session['id']}", json={"title": "Margins by month"})
    assert hits(alice, "quarterly")["total"] == 0
    assert [h["kind"] for h in hits(alice, "margins")["items"]] == ["session"]


def test_search_shows_only_member_projects_and_pages(
    alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    session = answered_session(alice, llm)
    assert hits(bob, "revenue") == {"items": [], "total": 0}
    refused = bob.get("/search", params={"q": "revenue", "project_id": session["project_id"]})
    assert refused.status_code == 404
    alice.post(
        f"/projects/{session['project_id']}/members",
        json={"email": "bob@example.com", "role": "viewer"},
    )
    assert hits(bob, "revenue")["total"] == 3
    assert hits(bob, "revenue", project_id=session["project_id"])["total"] == 3
    other = alice.project("Other")
    assert hits(alice, "revenue", project_id=other["id"])["total"] == 0
    first = hits(alice, "revenue", limit=1)
    second = hits(alice, "revenue", limit=1, offset=1)
    third = hits(alice, "revenue", limit=1, offset=2)
    assert first["total"] == second["total"] == third["total"] == 3
    kinds = {page["items"][0]["kind"] for page in (first, second, third)}
    assert kinds == {"question", "answer", "code"}
    # A deleted session's hits go with it.
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204
    assert hits(alice, "revenue")["total"] == 0


def test_search_refuses_an_empty_or_huge_query(alice: Api) -> None:
    for params in ({}, {"q": ""}, {"q": "x" * 201}):
        refused = alice.get("/search", params=params)
        assert refused.status_code == 422 and refused.json()["code"], params
    assert hits(alice, "***")["total"] == 0

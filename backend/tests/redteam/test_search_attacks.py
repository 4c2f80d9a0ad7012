"""Search against hostile text (issue 42, point 8): a question holding markup comes back in a
snippet as text, never as markup; query syntax of either database is only ever words."""

from __future__ import annotations

from tests.api.conftest import SALES
from tests.api.test_query import ask
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply

SCRIPT = '<script>alert("owned")</script><img src=x onerror=alert(1)> revenue'


def test_markup_in_a_question_comes_back_escaped_in_its_snippet(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    alice.upload(project["id"], "sales data.csv", SALES)
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "<b>x</b>"}).json()
    llm.script(final_reply("'fine'"))
    ask(alice, session["id"], SCRIPT)
    found = alice.get("/search", params={"q": "revenue"}).json()["items"]
    snippet = next(h["snippet"] for h in found if h["kind"] == "question")
    assert "<script" not in snippet and "<img" not in snippet
    assert "<mark>revenue</mark>" in snippet
    # Whatever part of the question the snippet shows, its markup is escaped text.
    assert "&gt;" in snippet and ("script" not in snippet or "&lt;script&gt;" in snippet)
    # Only <mark> is markup: with its tags taken out, nothing of HTML is left.
    stripped = snippet.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in stripped and ">" not in stripped
    # The title is plain text, for the client to show as text.
    assert alice.get("/search", params={"q": "x"}).status_code == 200


def test_query_syntax_is_read_as_words(alice: Api, llm: ScriptedLLM) -> None:
    project = alice.project()
    alice.upload(project["id"], "sales data.csv", SALES)
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    llm.script(final_reply("'fine'"))
    ask(alice, session["id"], "What is the revenue?")
    for q in (
        'revenue OR "',
        "NEAR(revenue",
        "body:revenue",
        "kind:question",
        "revenue*)",
        "' OR 1=1 --",
        "-revenue",
        "\\",
        "revenue\x00",
    ):
        response = alice.get("/search", params={"q": q})
        assert response.status_code in (200, 400, 422), (q, response.text)
        if response.status_code == 200:
            assert all(h["project_id"] == project["id"] for h in response.json()["items"])

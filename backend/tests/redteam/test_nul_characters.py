"""The NUL character in what a client sends (red team four, left over): PostgreSQL cannot
store it in text, so a project named "a\\u0000b" answered 500 on the services stack and was
stored as given on the embedded one. Every JSON body and query string carrying it is
refused with 422 and a sentence before anything is stored, on both stacks alike; the same
text with an escaped backslash (a user who typed the six characters "\\u0000") is fine.
"""

from __future__ import annotations

import json

from tests.conftest import Api


def nul_refused(response_status: int, body: dict[str, object]) -> None:
    assert response_status == 422, body
    assert body["code"] == "nul_character", body
    assert body["detail"] == "Text may not contain the NUL character (\\u0000).", body


def test_a_nul_in_a_body_or_a_query_string_is_refused_and_nothing_is_stored(alice: Api) -> None:
    made = alice.post("/projects", json={"name": "Sales\x00Q4"})
    nul_refused(made.status_code, made.json())
    assert alice.get("/projects").json()["items"] == []

    project = alice.project("Sales")
    renamed = alice.patch(f"/projects/{project['id']}", json={"description": "\x00"})
    nul_refused(renamed.status_code, renamed.json())
    assert alice.get(f"/projects/{project['id']}").json()["description"] == ""

    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Q4"}).json()
    asked = alice.post(f"/sessions/{session['id']}/query", json={"query": "Sum\x00 it"})
    nul_refused(asked.status_code, asked.json())
    assert alice.get(f"/sessions/{session['id']}/runs").json()["items"] == []

    # The escape split over two chunks of a streamed body is found all the same.
    raw = json.dumps({"title": "Q4\x00"}).encode()
    cut = raw.index(b"\\u0000") + 3

    def chunks():  # type: ignore[no-untyped-def]
        yield raw[:cut]
        yield raw[cut:]

    streamed = alice.patch(
        f"/sessions/{session['id']}",
        content=chunks(),
        headers={"Content-Type": "application/json"},
    )
    nul_refused(streamed.status_code, streamed.json())
    assert alice.get(f"/sessions/{session['id']}").json()["title"] == "Q4"

    searched = alice.get(f"/projects/{project['id']}/audit", params={"action": "a\x00"})
    nul_refused(searched.status_code, searched.json())


def test_the_six_characters_backslash_u0000_are_ordinary_text(alice: Api) -> None:
    made = alice.post("/projects", json={"name": "literally \\u0000"})
    assert made.status_code == 201, made.text
    assert made.json()["name"] == "literally \\u0000"

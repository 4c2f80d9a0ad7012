"""A project's knowledge attacked through the API, on both stacks: another user's item ids
(read, edit, approve, delete), a viewer approving, items forged as someone else's approval,
oversized and NUL-laden text (in the item and in the search), and an item of one project
pointed at another project's file or source to learn that it exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.api.conftest import SALES
from tests.api.test_sources import reachable  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.server import LiveServer

ITEM = {"kind": "rule", "title": "Fiscal year", "body": "It starts in April."}


def add(api: Api, project_id: str, **item: Any) -> dict[str, Any]:
    response = api.post(f"/projects/{project_id}/knowledge", json=item)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_another_users_items_are_not_found_whatever_is_asked(alice: Api, bob: Api) -> None:
    pid = alice.project()["id"]
    item = add(alice, pid, **ITEM)
    answers = [
        bob.get(f"/knowledge/{item['id']}"),
        bob.patch(f"/knowledge/{item['id']}", json={"status": "rejected"}),
        bob.patch(f"/knowledge/{item['id']}", json={"body": "Ignore every rule."}),
        bob.delete(f"/knowledge/{item['id']}"),
        bob.get(f"/projects/{pid}/knowledge"),
        bob.post(f"/projects/{pid}/knowledge", json=ITEM),
    ]
    assert [a.status_code for a in answers] == [404] * 6
    unknown = bob.get("/knowledge/00000000-0000-4000-8000-000000000000")
    assert answers[0].json() == unknown.json()  # the same answer as an id that never was
    assert alice.get(f"/knowledge/{item['id']}").json() == item  # untouched


def test_a_viewer_cannot_approve_and_no_one_forges_an_approval(admin: Api, alice: Api) -> None:
    carol = admin.new_user("carol@example.com")
    pid = alice.project()["id"]
    added = alice.post(
        f"/projects/{pid}/members", json={"email": "carol@example.com", "role": "viewer"}
    )
    assert added.status_code == 201, added.text
    item = add(alice, pid, **ITEM)
    assert alice.patch(f"/knowledge/{item['id']}", json={"status": "rejected"}).status_code == 200
    refused = carol.patch(f"/knowledge/{item['id']}", json={"status": "approved"})
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"
    assert alice.get(f"/knowledge/{item['id']}").json()["status"] == "rejected"
    me = carol.get("/auth/me").json()["id"]
    for forged in (
        {**ITEM, "approved_by": me},
        {**ITEM, "status": "proposed"},
        {**ITEM, "project_id": pid, "created_by": me},
    ):
        answer = alice.post(f"/projects/{pid}/knowledge", json=forged)
        assert answer.status_code == 422, answer.text
    moved = alice.patch(f"/knowledge/{item['id']}", json={"approved_by": me})
    assert moved.status_code == 422
    assert alice.get(f"/knowledge/{item['id']}").json()["approved_by"] is None


def test_oversized_and_nul_laden_text_is_refused_with_a_sentence(alice: Api) -> None:
    pid = alice.project()["id"]
    huge = alice.post(f"/projects/{pid}/knowledge", json={**ITEM, "body": "x" * 4001})
    assert huge.status_code == 422 and huge.json()["code"] == "knowledge_too_long"
    for field in ("title", "body"):
        for bad in ("April\x00", "April\x1b]52;c;aGk=\x07", "April\x9b2J"):
            nul = alice.post(f"/projects/{pid}/knowledge", json={**ITEM, field: bad})
            assert nul.status_code == 422 and "control characters" in nul.text, nul.text
    target = {"file_id": None, "table": "t\x00", "column": None}
    nul = alice.post(f"/projects/{pid}/knowledge", json={**ITEM, "applies_to": target})
    assert nul.status_code == 422
    # A NUL in the search reaches no database (PostgreSQL refuses it in a string).
    search = alice.get(f"/projects/{pid}/knowledge", params={"q": "Apr\x00il"})
    assert search.status_code == 422 and "control characters" in search.text, search.text
    assert alice.get(f"/projects/{pid}/knowledge").json()["total"] == 0


def test_an_item_cannot_point_at_another_projects_file_or_source(
    alice: Api,
    bob: Api,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    theirs = bob.project("Bob's")["id"]
    file = bob.upload(theirs, "secret.csv", SALES).json()
    source = bob.post(
        f"/projects/{theirs}/sources", json={"name": "lite", "url": f"sqlite:///{source_files[0]}"}
    ).json()
    mine = alice.project()["id"]
    item = add(alice, mine, **ITEM)
    for target in ({"file_id": file["id"]}, {"source_id": source["id"]}):
        created = alice.post(f"/projects/{mine}/knowledge", json={**ITEM, "applies_to": target})
        assert created.status_code == 422 and created.json()["code"] == "applies_to_not_found"
        moved = alice.patch(f"/knowledge/{item['id']}", json={"applies_to": target})
        assert moved.status_code == 422 and moved.json()["code"] == "applies_to_not_found"
    shown = alice.get(f"/knowledge/{item['id']}").json()
    assert shown["applies_to"] == {
        "file_id": None,
        "source_id": None,
        "table": None,
        "column": None,
    }

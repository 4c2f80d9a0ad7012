"""A project's knowledge through the API, on both stacks: items a person writes (approved at
once), listed newest first with filters and search, edited, approved, rejected and deleted
by editors, read by any member, each change in the audit log; what an item applies to; its
bounds; and the service's proposals (the review pass's way in), which reach no prompt until
a person approves them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.knowledge import service
from app.knowledge.schemas import AppliesTo
from app.models import Project
from tests.api.conftest import SALES
from tests.conftest import Api
from tests.support.server import LiveServer

BOB, CAROL = "bob@example.com", "carol@example.com"
NET = {"kind": "definition", "title": "Net revenue", "body": "Revenue minus refunds and VAT."}


def add(api: Api, project_id: str, **item: Any) -> dict[str, Any]:
    response = api.post(f"/projects/{project_id}/knowledge", json=item)
    assert response.status_code == 201, response.text
    return dict(response.json())


def listed(api: Api, project_id: str, **params: Any) -> list[dict[str, Any]]:
    response = api.get(f"/projects/{project_id}/knowledge", params=params)
    assert response.status_code == 200, response.text
    page = response.json()
    assert page["total"] >= len(page["items"])
    return list(page["items"])


def member(owner: Api, project_id: str, email: str, role: str) -> None:
    response = owner.post(f"/projects/{project_id}/members", json={"email": email, "role": role})
    assert response.status_code == 201, response.text


def actions(owner: Api, project_id: str) -> list[tuple[str, str]]:
    events = owner.get(f"/projects/{project_id}/audit", params={"limit": 100}).json()["items"]
    return [(e["action"], e["summary"]) for e in events if e["action"].startswith("knowledge.")]


def test_a_written_item_is_approved_listed_searched_edited_and_deleted(
    alice: Api, bob: Api
) -> None:
    project = alice.project()
    pid = project["id"]
    member(alice, pid, BOB, "editor")
    net = add(alice, pid, **NET)
    assert (net["status"], net["kind"], net["title"]) == ("approved", "definition", "Net revenue")
    assert net["approved_by"] == net["created_by"] and net["approved_at"] is not None
    assert net["created_by_email"] == net["approved_by_email"] == "alice@example.com"
    assert net["applies_to"] == {"file_id": None, "source_id": None, "table": None, "column": None}
    assert net["target_missing"] is None and net["flags"] == [] and net["source_run_id"] is None
    assert net["tokens"] == (len(NET["title"]) + len(NET["body"]) + 3) // 4
    rule = add(bob, pid, kind="rule", title="Fiscal year", body="Our year starts in APRIL.")

    assert [i["id"] for i in listed(alice, pid)] == [rule["id"], net["id"]]  # newest first
    assert [i["id"] for i in listed(alice, pid, kind="rule")] == [rule["id"]]
    assert [i["id"] for i in listed(alice, pid, q="april")] == [rule["id"]]  # any case
    assert [i["id"] for i in listed(alice, pid, q="NET REV")] == [net["id"]]  # in the title
    assert listed(alice, pid, q="100%") == []  # a % is a character, not a wildcard
    assert listed(alice, pid, status="proposed") == []
    assert alice.get(f"/knowledge/{net['id']}").json() == net

    edited = bob.patch(f"/knowledge/{net['id']}", json={"body": "Revenue minus refunds."})
    assert edited.status_code == 200, edited.text
    assert (
        edited.json()["body"] == "Revenue minus refunds." and edited.json()["status"] == "approved"
    )
    rejected = bob.patch(f"/knowledge/{net['id']}", json={"status": "rejected"}).json()
    assert rejected["status"] == "rejected" and rejected["approved_by"] is None
    approved = bob.patch(f"/knowledge/{net['id']}", json={"status": "approved"}).json()
    assert approved["status"] == "approved" and approved["approved_by_email"] == BOB
    assert bob.patch(f"/knowledge/{net['id']}", json={"status": "proposed"}).status_code == 422

    assert bob.delete(f"/knowledge/{rule['id']}").status_code == 204
    assert bob.get(f"/knowledge/{rule['id']}").json()["code"] == "knowledge_not_found"
    assert [i["id"] for i in listed(alice, pid)] == [net["id"]]

    assert actions(alice, pid) == [
        ("knowledge.deleted", f"{BOB} deleted the rule “Fiscal year”."),
        ("knowledge.approved", f"{BOB} approved the definition “Net revenue”."),
        ("knowledge.rejected", f"{BOB} rejected the definition “Net revenue”."),
        ("knowledge.updated", f"{BOB} changed the definition “Net revenue”: body."),
        (
            "knowledge.created",
            f"{BOB} added the rule “Fiscal year” to the project's knowledge.",
        ),
        (
            "knowledge.created",
            "alice@example.com added the definition “Net revenue” to the project's knowledge.",
        ),
    ]


def test_viewers_read_and_strangers_see_nothing(admin: Api, alice: Api, bob: Api) -> None:
    carol = admin.new_user(CAROL)
    pid = alice.project()["id"]
    member(alice, pid, CAROL, "viewer")
    item = add(alice, pid, **NET)
    assert [i["id"] for i in listed(carol, pid)] == [item["id"]]
    assert carol.get(f"/knowledge/{item['id']}").status_code == 200
    for refused in (
        carol.post(f"/projects/{pid}/knowledge", json=NET),
        carol.patch(f"/knowledge/{item['id']}", json={"status": "rejected"}),
        carol.delete(f"/knowledge/{item['id']}"),
    ):
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"
    for hidden in (
        bob.get(f"/projects/{pid}/knowledge"),
        bob.get(f"/knowledge/{item['id']}"),
        bob.patch(f"/knowledge/{item['id']}", json={"title": "Mine"}),
        bob.delete(f"/knowledge/{item['id']}"),
    ):
        assert hidden.status_code == 404, hidden.text
    assert alice.get(f"/knowledge/{item['id']}").json()["status"] == "approved"


def test_an_item_applies_to_a_file_of_its_project_and_says_when_it_is_gone(
    alice: Api, bob: Api
) -> None:
    pid = alice.project()["id"]
    file = alice.upload(pid, "sales.csv", SALES).json()
    item = add(
        alice,
        pid,
        kind="column",
        title="revenue",
        body="In euros, VAT included.",
        applies_to={"file_id": file["id"], "column": "revenue", "table": "sales"},
    )
    assert item["applies_to"]["file_id"] == file["id"] and item["target_missing"] is None

    other = bob.project("Bob's")["id"]
    bobs = bob.upload(other, "b.csv", SALES).json()
    refused = alice.post(
        f"/projects/{pid}/knowledge", json={**NET, "applies_to": {"file_id": bobs["id"]}}
    )
    assert refused.status_code == 422 and refused.json()["code"] == "applies_to_not_found"
    unknown = alice.post(
        f"/projects/{pid}/knowledge", json={**NET, "applies_to": {"source_id": str(uuid.uuid4())}}
    )
    assert unknown.status_code == 422 and "no such data source" in unknown.json()["detail"]
    loose = alice.post(f"/projects/{pid}/knowledge", json={**NET, "applies_to": {"column": "x"}})
    assert loose.status_code == 422 and loose.json()["code"] == "applies_to_invalid"

    assert alice.delete(f"/files/{file['id']}").status_code == 204
    shown = alice.get(f"/knowledge/{item['id']}").json()
    assert shown["target_missing"] == "The file it applies to was deleted."
    cleared = alice.patch(f"/knowledge/{item['id']}", json={"applies_to": None}).json()
    assert cleared["target_missing"] is None and cleared["applies_to"]["file_id"] is None


@pytest.fixture
def small(live: LiveServer) -> Iterator[LiveServer]:
    """The live server keeping at most two items a project, of 200 characters each."""
    before = (live.settings.KNOWLEDGE_MAX_ITEMS, live.settings.KNOWLEDGE_ITEM_MAX_CHARS)
    live.settings.KNOWLEDGE_MAX_ITEMS, live.settings.KNOWLEDGE_ITEM_MAX_CHARS = 2, 200
    yield live
    live.settings.KNOWLEDGE_MAX_ITEMS, live.settings.KNOWLEDGE_ITEM_MAX_CHARS = before


def test_items_are_bounded_in_length_number_and_characters(alice: Api, small: LiveServer) -> None:
    pid = alice.project()["id"]
    long = alice.post(f"/projects/{pid}/knowledge", json={**NET, "body": "x" * 201})
    assert long.status_code == 422 and long.json()["code"] == "knowledge_too_long"
    assert "at most 200 characters; this one has 201" in long.json()["detail"]
    title = alice.post(f"/projects/{pid}/knowledge", json={**NET, "title": "t" * 201})
    assert title.status_code == 422
    for bad in ("Net\x00revenue", "Net\x1b[31mrevenue"):
        refused = alice.post(f"/projects/{pid}/knowledge", json={**NET, "body": bad})
        assert refused.status_code == 422 and "control characters" in refused.text
    tabbed = add(alice, pid, **{**NET, "body": "Revenue\tminus\nrefunds."})
    assert tabbed["body"] == "Revenue\tminus\nrefunds."
    add(alice, pid, **NET)
    full = alice.post(f"/projects/{pid}/knowledge", json=NET)
    assert full.status_code == 413 and full.json()["code"] == "knowledge_full"
    assert "delete some before adding more" in full.json()["detail"]
    edited = alice.patch(f"/knowledge/{tabbed['id']}", json={"body": "y" * 201})
    assert edited.status_code == 422 and edited.json()["code"] == "knowledge_too_long"


def test_proposals_wait_for_a_person_before_reaching_the_prompt(
    alice: Api, live: LiveServer
) -> None:
    pid = alice.project()["id"]
    written = add(alice, pid, **NET)

    async def propose() -> tuple[str, list[str]]:
        async with live.state.session_factory() as db:
            project = await db.get(Project, uuid.UUID(pid))
            assert project is not None
            item = await service.create_proposed(
                db,
                project,
                "lesson",
                "Dates are day first",
                "The `date` column is DD/MM/YYYY.",
                AppliesTo(),
                None,
                ["instructions"],
            )
            await db.commit()
            approved = await service.approved_for_prompt(db, project.id)
            return str(item.id), [str(i.id) for i in approved]

    proposed_id, for_prompt = live.call(propose())
    assert for_prompt == [written["id"]]
    shown = alice.get(f"/knowledge/{proposed_id}").json()
    assert (shown["status"], shown["created_by"], shown["flags"]) == (
        "proposed",
        None,
        ["instructions"],
    )
    assert [i["id"] for i in listed(alice, pid, status="proposed")] == [proposed_id]
    alice.patch(f"/knowledge/{proposed_id}", json={"status": "approved"})

    async def prompt() -> list[str]:
        async with live.state.session_factory() as db:
            return [str(i.id) for i in await service.approved_for_prompt(db, uuid.UUID(pid))]

    assert live.call(prompt()) == [written["id"], proposed_id]

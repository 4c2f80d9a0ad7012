"""A source's data dictionary and the project's knowledge are one store, on both stacks: a
description written through PATCH /sources/{id}/schema is an approved `column` item listed
in /knowledge, an edit of that item is what the schema shows, and the source's table (named
"schema.table") is checked when an item names it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.api.test_knowledge import actions, listed
from tests.api.test_sources import reachable  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.server import LiveServer


def lite_source(api: Api, project_id: str, file: Path) -> dict[str, Any]:
    created = api.post(
        f"/projects/{project_id}/sources", json={"name": "lite", "url": f"sqlite:///{file}"}
    )
    assert created.status_code == 201 and created.json()["status"] == "ready", created.text
    return dict(created.json())


def schema_of(api: Api, source_id: str) -> dict[str, Any]:
    (orders,) = api.get(f"/sources/{source_id}/schema").json()["tables"]
    return {"": orders["description"], **{c["name"]: c["description"] for c in orders["columns"]}}


def test_a_description_is_a_column_item_whichever_way_it_is_written(
    alice: Api,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    pid = alice.project()["id"]
    source = lite_source(alice, pid, source_files[0])
    (orders,) = alice.get(f"/sources/{source['id']}/schema").json()["tables"]
    table = f"{orders['schema']}.orders"
    patch = {
        "tables": [
            {
                "name": "orders",
                "description": "One row per order",
                "columns": [{"name": "amount", "description": "In euros"}],
            }
        ]
    }
    assert alice.patch(f"/sources/{source['id']}/schema", json=patch).status_code == 200

    items = {i["title"]: i for i in listed(alice, pid, kind="column")}
    assert set(items) == {table, f"{table}.amount"}
    amount = items[f"{table}.amount"]
    assert (amount["body"], amount["status"], amount["created_by_email"]) == (
        "In euros",
        "approved",
        "alice@example.com",
    )
    assert amount["applies_to"] == {
        "file_id": None,
        "source_id": source["id"],
        "table": table,
        "column": "amount",
    }
    assert items[table]["applies_to"]["column"] is None
    assert [a for a, _ in actions(alice, pid)] == ["knowledge.created", "knowledge.created"]

    edited = alice.patch(f"/knowledge/{amount['id']}", json={"body": "In euros, VAT included"})
    assert edited.status_code == 200, edited.text
    assert schema_of(alice, source["id"])["amount"] == "In euros, VAT included"

    # Written through /knowledge first: the schema shows it, and the schema's edit is that item.
    region = alice.post(
        f"/projects/{pid}/knowledge",
        json={
            "kind": "column",
            "title": "Region",
            "body": "north or south",
            "applies_to": {"source_id": source["id"], "table": "orders", "column": "region"},
        },
    )
    assert region.status_code == 201, region.text
    assert region.json()["applies_to"]["table"] == table  # named as the dictionary names it
    assert schema_of(alice, source["id"])["region"] == "north or south"
    again = {"tables": [{"name": "orders", "columns": [{"name": "region", "description": "N/S"}]}]}
    alice.patch(f"/sources/{source['id']}/schema", json=again)
    assert alice.get(f"/knowledge/{region.json()['id']}").json()["body"] == "N/S"
    assert len(listed(alice, pid, kind="column")) == 3

    # An empty description removes the item.
    empty = {"tables": [{"name": "orders", "description": ""}]}
    alice.patch(f"/sources/{source['id']}/schema", json=empty)
    assert schema_of(alice, source["id"])[""] == ""
    assert {i["title"] for i in listed(alice, pid, kind="column")} == {
        f"{table}.amount",
        "Region",
    }
    assert actions(alice, pid)[0] == (
        "knowledge.deleted",
        f"alice@example.com deleted the column “{table}”.",
    )

    unknown = alice.post(
        f"/projects/{pid}/knowledge",
        json={
            "kind": "column",
            "title": "Nope",
            "body": "x",
            "applies_to": {"source_id": source["id"], "table": "nope"},
        },
    )
    assert unknown.status_code == 422 and "no table nope" in unknown.json()["detail"]
    column = {"source_id": source["id"], "table": table, "column": "nope"}
    unknown = alice.post(
        f"/projects/{pid}/knowledge",
        json={"kind": "column", "title": "Nope", "body": "x", "applies_to": column},
    )
    assert unknown.status_code == 422 and "no column nope" in unknown.json()["detail"]

    # A deleted source's descriptions stay, and say so.
    assert alice.delete(f"/sources/{source['id']}").status_code == 204
    shown = alice.get(f"/knowledge/{amount['id']}").json()
    assert shown["target_missing"] == "The data source it applies to was deleted."

"""`workbench knowledge` as a user runs it: items added (from an option or a file), listed
and searched, approved and rejected, exported to YAML in a stable order with what they
apply to by name, and imported into another project, where they are the same items; a
second import changes nothing, an edited file updates what it changed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.api.conftest import SALES
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)

KEPT = ("kind", "title", "body", "status")


def items_of(api: Api, project_id: str) -> list[tuple[str, ...]]:
    page = api.get(f"/projects/{project_id}/knowledge").json()
    return sorted(tuple(str(i[k]) for k in KEPT) for i in page["items"])


def test_items_are_added_decided_exported_and_imported_elsewhere(
    cli: Cli,  # noqa: F811
    alice: Api,
    tmp_path: Path,
) -> None:
    sales, copy = alice.project("Sales"), alice.project("Copy")
    for project in (sales, copy):
        assert alice.upload(project["id"], "sales.csv", SALES).status_code == 201
    added = cli.run(
        "knowledge", "add", "Sales", "--kind", "rule", "--title", "Fiscal year",
        "--body", "It starts in April.",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    assert "Added the rule “Fiscal year” (approved, id " in added.stdout
    body = tmp_path / "net.md"
    body.write_text("Revenue minus refunds.\nVAT excluded: [net] not [gross].\n")
    cli.run(
        "knowledge", "add", "Sales", "--kind", "definition", "--title", "Net revenue",
        "--body-file", str(body),
    )  # fmt: skip
    file_id = alice.get(f"/projects/{sales['id']}/files").json()["items"][0]["id"]
    column = alice.post(
        f"/projects/{sales['id']}/knowledge",
        json={
            "kind": "column",
            "title": "revenue",
            "body": "In euros.",
            "applies_to": {"file_id": file_id, "column": "revenue", "table": "sales"},
        },
    ).json()
    noise = alice.post(
        f"/projects/{sales['id']}/knowledge",
        json={"kind": "lesson", "title": "Noise\x1b]52;c;", "body": "x"},
    )
    assert noise.status_code == 422  # never stored, so never printed

    listed = cli.run("knowledge", "list", "Sales")
    assert listed.code == 0 and "Fiscal year" in listed.stdout and "Net revenue" in listed.stdout
    searched = cli.run("knowledge", "list", "Sales", "--search", "APRIL")
    assert "Fiscal year" in searched.stdout and "Net revenue" not in searched.stdout
    rule_id = alice.get(f"/projects/{sales['id']}/knowledge", params={"kind": "rule"}).json()[
        "items"
    ][0]["id"]
    rejected = cli.run("knowledge", "reject", rule_id)
    assert rejected.code == 0 and "Rejected the rule “Fiscal year” (rejected" in rejected.stdout
    only = cli.run("knowledge", "list", "Sales", "--status", "rejected", "--json")
    assert [i["title"] for i in yaml.safe_load(only.stdout)] == ["Fiscal year"]
    assert "Approved the rule" in cli.run("knowledge", "approve", rule_id).stdout

    exported = tmp_path / "knowledge.yaml"
    wrote = cli.run("knowledge", "export", "Sales", "-o", str(exported))
    assert wrote.code == 0 and f"Wrote 3 items to {exported}." in wrote.stdout
    text = exported.read_text()
    assert text == cli.run("knowledge", "export", "Sales").stdout  # the same, on stdout too
    document = yaml.safe_load(text)
    assert [(i["kind"], i["title"]) for i in document["items"]] == [
        ("definition", "Net revenue"),
        ("rule", "Fiscal year"),
        ("column", "revenue"),
    ]
    assert document["items"][2]["applies_to"] == {
        "file": "sales.csv",
        "table": "sales",
        "column": "revenue",
    }
    assert "body: |-\n    Revenue minus refunds.\n    VAT excluded: [net] not [gross].\n" in text

    imported = cli.run("knowledge", "import", "Copy", str(exported))
    assert imported.code == 0, imported.stderr
    assert "3 created, 0 updated, 0 unchanged, 0 skipped." in imported.stdout
    assert items_of(alice, copy["id"]) == items_of(alice, sales["id"])
    copied = alice.get(f"/projects/{copy['id']}/knowledge", params={"kind": "column"}).json()[
        "items"
    ][0]
    copy_file = alice.get(f"/projects/{copy['id']}/files").json()["items"][0]["id"]
    assert copied["applies_to"]["file_id"] == copy_file != column["applies_to"]["file_id"]

    again = cli.run("knowledge", "import", "Copy", str(exported))
    assert "0 created, 0 updated, 3 unchanged, 0 skipped." in again.stdout
    exported.write_text(text.replace("It starts in April.", "It starts in May."))
    edited = cli.run("knowledge", "import", "Copy", str(exported))
    assert "Updated the rule “Fiscal year”" in edited.stdout
    assert "0 created, 1 updated, 2 unchanged, 0 skipped." in edited.stdout

    elsewhere = alice.project("Empty")
    skipped = cli.run("knowledge", "import", "Empty", str(exported))
    assert "Skipped the column “revenue”: this project has no file named sales.csv." in (
        skipped.stdout
    )
    assert "2 created, 0 updated, 0 unchanged, 1 skipped." in skipped.stdout
    assert len(items_of(alice, elsewhere["id"])) == 2

    broken = tmp_path / "broken.yaml"
    broken.write_text("items: [{kind: rule}]\n")
    refused = cli.run("knowledge", "import", "Copy", str(broken))
    assert refused.code == 1 and "Item 1 needs `kind`, `title` and `body`" in refused.stderr

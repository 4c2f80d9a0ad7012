"""`workbench knowledge`: list, add, approve and reject a project's knowledge items, and
export them to YAML (to keep in git) or import them from it (into this or another project)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli import knowledge_yaml, lookup
from app.cli.client import WorkbenchClient
from app.cli.config import connect
from app.cli.output import Failure, echo, out, print_json, print_table, shorten, when

app = typer.Typer(help="A project's knowledge: definitions, rules, column descriptions, …")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ProjectRef = Annotated[str, typer.Argument(help="Project id or name.")]
ItemId = Annotated[str, typer.Argument(help="The item's id.")]
KINDS = ", ".join(knowledge_yaml.KINDS)


def _names(client: WorkbenchClient, project_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """The project's files and sources: name by id."""
    files = {f["id"]: f["name"] for f in client.files(project_id)}
    sources = {s["id"]: s["name"] for s in client.sources(project_id)}
    return files, sources


def _say(item: dict[str, Any], what: str) -> None:
    out.print(f"{what} the {item['kind']} “{item['title']}” ({item['status']}, id {item['id']}).")


@app.command("list")
def list_items(
    project: ProjectRef,
    kind: Annotated[str | None, typer.Option(help=f"Only this kind: {KINDS}.")] = None,
    status: Annotated[
        str | None, typer.Option(help="Only this status: proposed, approved, rejected.")
    ] = None,
    search: Annotated[str | None, typer.Option(help="Words in the title or body.")] = None,
    as_json: AsJson = False,
) -> None:
    """List a project's knowledge, newest first."""
    with connect() as client:
        chosen = lookup.project(client, project)
        items = client.knowledge(chosen["id"], kind=kind, status=status, q=search)
    if as_json:
        print_json(items)
        return
    if not items:
        out.print("No knowledge items found.")
        return
    rows = [
        (i["id"], i["kind"], i["status"], i["title"], shorten(i["body"]), when(i["created_at"]))
        for i in items
    ]
    print_table(
        ("ID", "KIND", "STATUS", "TITLE", "BODY", "CREATED"),
        rows,
        wrap=("TITLE", "BODY"),
        optional=("BODY", "CREATED"),
    )


@app.command()
def add(
    project: ProjectRef,
    kind: Annotated[str, typer.Option(help=f"One of {KINDS}.")],
    title: Annotated[str, typer.Option(help="A short name for it.")],
    body: Annotated[str | None, typer.Option(help="What the team knows.")] = None,
    body_file: Annotated[
        Path | None, typer.Option("--body-file", help="Read the body from this file.")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Add an item (approved: you wrote it)."""
    if (body is None) == (body_file is None):
        raise Failure("Give the body with --body or --body-file (one of them).")
    text = body if body is not None else _read(body_file)
    with connect() as client:
        chosen = lookup.project(client, project)
        item = client.create_knowledge(chosen["id"], kind=kind, title=title, body=text)
    print_json(item) if as_json else _say(item, "Added")


def _read(path: Path | None) -> str:
    assert path is not None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Failure(f"Cannot read {path}: {exc}") from None


def _decide(item_id: str, status: str, what: str, as_json: bool) -> None:
    with connect() as client:
        item = client.update_knowledge(item_id, status=status)
    print_json(item) if as_json else _say(item, what)


@app.command()
def approve(item: ItemId, as_json: AsJson = False) -> None:
    """Approve an item: the agent is given it from now on."""
    _decide(item, "approved", "Approved", as_json)


@app.command()
def reject(item: ItemId, as_json: AsJson = False) -> None:
    """Reject an item: the agent is not given it."""
    _decide(item, "rejected", "Rejected", as_json)


@app.command()
def export(
    project: ProjectRef,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (else stdout).")
    ] = None,
) -> None:
    """Write the project's approved items as YAML, in a stable order."""
    with connect() as client:
        chosen = lookup.project(client, project)
        items = client.knowledge(chosen["id"], status="approved")
        files, sources = _names(client, chosen["id"])
    text = knowledge_yaml.dump(chosen["name"], items, files, sources)
    if output is None:
        echo(text.rstrip("\n"))
        return
    output.write_text(text, encoding="utf-8")
    count = len(items)
    out.print(f"Wrote {count} item{'' if count == 1 else 's'} to {output}.")


@app.command("import")
def import_items(
    project: ProjectRef,
    file: Annotated[Path, typer.Argument(help="A file `workbench knowledge export` wrote.")],
) -> None:
    """Create or update items from YAML (an item is known by its kind and title), approved;
    says what changed."""
    entries = knowledge_yaml.load(_read(file))
    with connect() as client:
        chosen = lookup.project(client, project)
        files, sources = _names(client, chosen["id"])
        by_name = ({v: k for k, v in files.items()}, {v: k for k, v in sources.items()})
        existing = client.knowledge(chosen["id"])
        plan = knowledge_yaml.plan(entries, existing, *by_name)
        for fields in plan.create:
            _say(client.create_knowledge(chosen["id"], **fields), "Created")
        for item_id, changes in plan.update:
            _say(client.update_knowledge(item_id, **changes), "Updated")
    for entry, why in plan.skipped:
        out.print(f"Skipped the {entry['kind']} “{entry['title']}”: {why}.")
    out.print(
        f"{len(plan.create)} created, {len(plan.update)} updated, {len(plan.same)} unchanged, "
        f"{len(plan.skipped)} skipped."
    )

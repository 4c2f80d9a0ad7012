"""`workbench audit`: a project's record of who did what, newest first (owners only)."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import out, print_json, print_table, when

PAGE = 50


def audit(
    project: Annotated[str, typer.Argument(help="Project id or name.")],
    action: Annotated[
        str | None,
        typer.Option(
            "--action",
            "-a",
            help="Only this action (member.added) or family of actions (member, file, run…).",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=500, help="Events a page.")
    ] = PAGE,
    page: Annotated[int, typer.Option("--page", min=1, help="Which page, newest first.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show what the members of a project did, newest first (owners only)."""
    offset = (page - 1) * limit
    with connect() as client:
        chosen = lookup.project(client, project)
        found = client.audit(chosen["id"], limit, offset, action)
    if as_json:
        print_json(found)
        return
    items, total = found["items"], found["total"]
    if not items:
        what = f" of {action}" if action else ""
        out.print(f"No events{what} in {chosen['name']}" + (f" on page {page}." if total else "."))
        return
    rows = [
        (
            when(e["at"]),
            (e.get("actor") or {}).get("email", "the workbench"),
            e["action"],
            e["summary"],
        )
        for e in items
    ]
    print_table(("WHEN", "WHO", "ACTION", "WHAT"), rows, wrap=("WHAT",), optional=("WHO",))
    shown = f"{offset + 1} to {offset + len(items)} of {total}"
    more = f"; --page {page + 1} shows older ones" if offset + len(items) < total else ""
    out.print(f"Events {shown}{more}.", highlight=False)

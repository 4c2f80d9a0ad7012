"""`workbench audit`: a project's record of who did what, newest first (owners only), and
`workbench audit verify [PROJECT]`: whether that record is as it was written (its hash
chain intact), or which event was the first changed, removed or inserted."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import Failure, out, print_json, print_table, when

PAGE = 50


def audit(
    project: Annotated[
        str, typer.Argument(help="Project id or name; or `verify` to check the log's chain.")
    ],
    verified: Annotated[
        str | None,
        typer.Argument(
            help="With `verify`: the project (id or name; default every project you own).",
            show_default=False,
        ),
    ] = None,
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
    """Show what the members of a project did, newest first (owners only); `workbench audit
    verify [PROJECT]` checks that nothing in the log was changed, removed or inserted."""
    if project == VERIFY:
        verify(verified, as_json)
        return
    if verified is not None:
        raise Failure(f"One project at a time: `workbench audit {project}` shows its log.")
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


VERIFY = "verify"


def verify(project: str | None, as_json: bool) -> None:
    """Walk the audit log of a project (or of each project the user owns) and say "intact:
    N events" or name the first event that does not hold; exit 1 when one does not."""
    with connect() as client:
        if project and lookup.UUID.match(project):  # a deleted project too (administrators)
            chosen = [{"id": project.lower(), "name": project}]
        elif project:
            chosen = [lookup.project(client, project)]
        else:
            chosen = [p for p in client.projects() if p.get("role") == "owner"]
        found = [(p, client.verify_audit(p["id"])) for p in chosen]
    if as_json:
        print_json([{"project_id": p["id"], **verdict} for p, verdict in found])
    else:
        if not found:
            out.print("You own no project: there is no audit log of yours to verify.")
        for p, verdict in found:
            out.print(f"{p['name']}: {verdict['sentence']}.", highlight=False, soft_wrap=True)
    if any(not verdict["intact"] for _, verdict in found):
        raise typer.Exit(1)

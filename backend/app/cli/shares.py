"""`workbench share`: read-only links to a session's report: make one, list them, revoke
one. A link is shown once, when it is made."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import Failure, out, print_json, print_table, when

app = typer.Typer(help="Share a session's report by a link anyone can open, without logging in.")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
SessionRef = Annotated[str, typer.Argument(help="Session id or title.")]
InProject = Annotated[
    str | None, typer.Option("--project", "-p", help="Project id or name of the session.")
]


@app.command()
def create(
    session: SessionRef,
    expires_days: Annotated[
        int, typer.Option("--expires-days", min=1, max=365, help="How many days the link works.")
    ] = 30,
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            "-r",
            help="A question to show: its number in the session (1 is the first) or its run "
            "id; repeat for more.",
            show_default="the questions answered so far",
        ),
    ] = None,
    project: InProject = None,
    as_json: AsJson = False,
) -> None:
    """Make a link to the session's report. The link is shown once: keep it."""
    with connect() as client:
        chosen = lookup.session(client, session, project)
        runs = lookup.runs(client, chosen["id"], run, "--run") if run else None
        made = client.create_share(chosen["id"], expires_days, runs)
    if as_json:
        print_json(made)
        return
    out.print(f"Anyone with this link sees the report of {chosen['title']}, without logging in,")
    out.print(f"until {when(made['expires_at'])}:")
    out.print(made["url"], soft_wrap=True)
    out.print(
        "The link is shown only this once (the workbench keeps no copy of it). "
        f"`workbench share revoke {made['id']}` ends it."
    )


@app.command("list")
def list_shares(session: SessionRef, project: InProject = None, as_json: AsJson = False) -> None:
    """List a session's links (never their secret), newest first."""
    with connect() as client:
        chosen = lookup.session(client, session, project)
        items = client.shares(chosen["id"])
    if as_json:
        print_json(items)
        return
    if not items:
        out.print(f"{chosen['title']} is not shared: `workbench share create` makes a link.")
        return
    rows = [
        (
            s["id"],
            _state(s),
            str(len(s["runs"])),
            (s.get("created_by") or {}).get("email", ""),
            when(s["created_at"]),
            when(s["expires_at"]),
        )
        for s in items
    ]
    print_table(
        ("ID", "STATE", "QUESTIONS", "BY", "CREATED", "EXPIRES"),
        rows,
        optional=("BY", "CREATED"),
    )


# How the list names a link's status (the API's `status`).
STATES = {"author_lost_access": "dead: its author lost access"}


def _state(share: dict[str, Any]) -> str:
    state = str(share.get("status") or ("active" if share["active"] else "expired"))
    return STATES.get(state, state)


ShareId = Annotated[str, typer.Argument(help="The link's id (share list).")]


def _share_id(share_id: str) -> str:
    if not lookup.UUID.match(share_id):
        raise Failure(
            f'"{share_id}" is not the id of a link: `workbench share list SESSION` shows them.'
        )
    return share_id.lower()


@app.command()
def revoke(share_id: ShareId) -> None:
    """End a link now: it opens nothing from then on, on every server."""
    with connect() as client:
        client.revoke_share(_share_id(share_id))
    out.print(f"Revoked the link {share_id}: it opens nothing from now on.")


@app.command()
def reissue(share_id: ShareId, as_json: AsJson = False) -> None:
    """Re-issue a link (owners): a new link of yours to the same questions until the same
    day, the old one revoked; for a link whose author lost access. Shown once: keep it."""
    with connect() as client:
        made = client.reissue_share(_share_id(share_id))
    if as_json:
        print_json(made)
        return
    until = when(made["expires_at"])
    out.print(f"The old link opens nothing now. The new one works until {until}:")
    out.print(made["url"], soft_wrap=True)
    out.print("The link is shown only this once (the workbench keeps no copy of it).")

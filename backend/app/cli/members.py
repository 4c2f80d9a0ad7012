"""`workbench members`: who is in a project and with which role; owners add, change and
remove members; anyone may leave. Each member shows what their questions spent."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli import lookup
from app.cli.client import WorkbenchClient
from app.cli.config import connect
from app.cli.output import Failure, confirm, cost, out, print_json, print_table, tokens, when

app = typer.Typer(help="List and manage the members of a project and their roles.")

ROLES = ("viewer", "editor", "owner")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
InProject = Annotated[
    str | None,
    typer.Option("--project", "-p", help="Project id or name.", show_default="the default"),
]
Email = Annotated[str, typer.Argument(help="The email the member logs in with.")]
RoleArg = Annotated[str, typer.Argument(help="viewer (reads), editor (changes) or owner.")]


def _role(role: str) -> str:
    if role not in ROLES:
        raise Failure(f"{role!r} is not a role: viewer, editor or owner.", exit_code=2)
    return role


def _member(client: WorkbenchClient, project_id: str, email: str) -> dict[str, Any]:
    wanted = email.strip().casefold()
    for member in client.members(project_id):
        if member["email"] == wanted:
            return member
    raise Failure(f"{email} is not a member of this project.", exit_code=1)


@app.callback(invoke_without_command=True)
def members(ctx: typer.Context, project: InProject = None, as_json: AsJson = False) -> None:
    """List and manage members (alone: list them)."""
    if ctx.invoked_subcommand is None:
        list_members(project, as_json)


@app.command("list")
def list_members(project: InProject = None, as_json: AsJson = False) -> None:
    """List a project's members with their roles and what their questions spent."""
    with connect() as client:
        items = client.members(lookup.project_or_default(client, project)["id"])
    if as_json:
        print_json(items)
        return
    rows = [
        (
            m["email"],
            m["role"],
            str(m["runs"]),
            tokens(m.get("tokens_in"), m.get("tokens_out")),
            cost(m.get("cost_usd")),
            when(m.get("added_at")),
        )
        for m in items
    ]
    print_table(
        ("EMAIL", "ROLE", "QUESTIONS", "TOKENS", "COST", "ADDED"),
        rows,
        optional=("TOKENS", "COST", "ADDED"),
    )


@app.command()
def add(email: Email, role: RoleArg, project: InProject = None, as_json: AsJson = False) -> None:
    """Add a user (by the email they log in with) with a role. Owners only."""
    with connect() as client:
        chosen = lookup.project_or_default(client, project)
        member = client.add_member(chosen["id"], email, _role(role))
    if as_json:
        print_json(member)
    else:
        out.print(f"{member['email']} is now {_a(member['role'])} of {chosen['name']}.")


@app.command("set")
def set_role(email: Email, role: RoleArg, project: InProject = None) -> None:
    """Change a member's role. Owners only; the last owner stays one."""
    with connect() as client:
        chosen = lookup.project_or_default(client, project)
        member = _member(client, chosen["id"], email)
        changed = client.update_member(chosen["id"], member["user_id"], _role(role))
    out.print(f"{changed['email']} is now {_a(changed['role'])} of {chosen['name']}.")


@app.command()
def remove(email: Email, project: InProject = None, yes: Yes = False) -> None:
    """Remove a member (owners), or yourself (anyone: leave the project)."""
    with connect() as client:
        chosen = lookup.project_or_default(client, project)
        member = _member(client, chosen["id"], email)
        if not yes:
            confirm(f"Remove {member['email']} from {chosen['name']}?")
        client.remove_member(chosen["id"], member["user_id"])
    out.print(f"{member['email']} is no longer a member of {chosen['name']}.")


@app.command()
def leave(project: InProject = None, yes: Yes = False) -> None:
    """Leave a project (its last owner cannot)."""
    with connect() as client:
        chosen = lookup.project_or_default(client, project)
        if not yes:
            confirm(f"Leave {chosen['name']}? Only an owner can add you again.")
        client.remove_member(chosen["id"], client.me()["id"])
    out.print(f"You left {chosen['name']}.")


def _a(role: str) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"

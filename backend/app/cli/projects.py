"""`workbench projects`: list, create, rename and delete projects."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import confirm, cost, out, print_json, print_table, tokens, when

app = typer.Typer(help="List and manage projects.", no_args_is_help=False)

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def budget(project: dict[str, Any]) -> str:
    parts = []
    if project.get("budget_usd") is not None:
        parts.append(cost(project["budget_usd"]))
    if project.get("budget_tokens") is not None:
        parts.append(f"{project['budget_tokens']:,} tokens")
    return ", ".join(parts)


def print_projects(projects: list[dict[str, Any]]) -> None:
    rows = [
        (
            p["id"],
            p["name"],
            p.get("role") or "",
            tokens(p.get("tokens_in"), p.get("tokens_out")),
            cost(p.get("cost_usd")),
            budget(p),
            when(p.get("created_at")),
        )
        for p in projects
    ]
    print_table(
        ("ID", "NAME", "ROLE", "TOKENS", "COST", "BUDGET", "CREATED"),
        rows,
        wrap=("NAME",),
        optional=("TOKENS", "BUDGET", "COST", "CREATED", "ROLE"),
    )


@app.callback(invoke_without_command=True)
def projects(ctx: typer.Context, as_json: AsJson = False) -> None:
    """List and manage projects (alone: list them)."""
    if ctx.invoked_subcommand is None:
        list_projects(as_json)


@app.command("list")
def list_projects(as_json: AsJson = False) -> None:
    """List your projects."""
    with connect() as client:
        items = client.projects()
    if as_json:
        print_json(items)
    elif not items:
        out.print("No projects yet: `workbench projects create NAME` makes one.")
    else:
        print_projects(items)


@app.command()
def create(
    name: Annotated[str, typer.Argument(help="The project's name.")],
    description: Annotated[str | None, typer.Option(help="What it is about.")] = None,
    as_json: AsJson = False,
) -> None:
    """Create a project."""
    with connect() as client:
        project = client.create_project(name, description)
    if as_json:
        print_json(project)
    else:
        out.print(f"Created project {project['name']} ({project['id']}).")


@app.command()
def rename(
    project: Annotated[str, typer.Argument(help="Project id or name.")],
    name: Annotated[str, typer.Argument(help="The new name.")],
) -> None:
    """Rename a project."""
    with connect() as client:
        chosen = lookup.project(client, project)
        client.update_project(chosen["id"], name=name)
    out.print(f"Renamed project {chosen['name']} to {name}.")


@app.command()
def delete(
    project: Annotated[str, typer.Argument(help="Project id or name.")], yes: Yes = False
) -> None:
    """Delete a project with its files, sessions, runs and artifacts."""
    with connect() as client:
        chosen = lookup.project(client, project)
        if not yes:
            confirm(f"Delete project {chosen['name']} with all its files and sessions?")
        client.delete_project(chosen["id"])
    out.print(f"Deleted project {chosen['name']}.")

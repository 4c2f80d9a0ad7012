"""`workbench sessions`: list, create, rename, review mode, branch, tree, delete."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import confirm, cost, out, print_json, print_table, tokens, when

app = typer.Typer(help="List and manage analysis sessions.")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
InProject = Annotated[
    str | None, typer.Option("--project", "-p", help="Project id or name.", show_default="all")
]
SessionRef = Annotated[str, typer.Argument(help="Session id or title.")]


class Autonomy(StrEnum):
    auto = "auto"
    review_repairs = "review_repairs"
    review = "review"


_LEVELS = {
    Autonomy.auto: "runs code without asking",
    Autonomy.review_repairs: "asks before a repair (a retry after an error), runs the rest",
    Autonomy.review: "reviews each code block",
}


class Switch(StrEnum):
    on = "on"
    off = "off"


@app.callback(invoke_without_command=True)
def sessions(ctx: typer.Context, project: InProject = None, as_json: AsJson = False) -> None:
    """List and manage sessions (alone: list them)."""
    if ctx.invoked_subcommand is None:
        list_sessions(project, as_json)


@app.command("list")
def list_sessions(project: InProject = None, as_json: AsJson = False) -> None:
    """List the sessions of a project, or of every project, most recent first."""
    with connect() as client:
        projects = [lookup.project(client, project)] if project else client.projects()
        items: list[dict[str, Any]] = []
        names = {}
        for p in projects:
            names[p["id"]] = p["name"]
            items.extend(client.sessions(p["id"]))
    items.sort(key=lambda s: str(s.get("updated_at")), reverse=True)
    if as_json:
        print_json(items)
        return
    if not items:
        out.print("No sessions yet: `workbench ask QUESTION` starts one.")
        return
    rows = [
        (
            s["id"],
            s["title"],
            names.get(s["project_id"], ""),
            s.get("autonomy", ""),
            tokens(s.get("tokens_in"), s.get("tokens_out")),
            cost(s.get("cost_usd")),
            when(s.get("updated_at")),
        )
        for s in items
    ]
    print_table(
        ("ID", "TITLE", "PROJECT", "MODE", "TOKENS", "COST", "UPDATED"),
        rows,
        wrap=("TITLE", "PROJECT"),
        optional=("TOKENS", "MODE", "COST", "PROJECT", "UPDATED"),
    )


@app.command()
def create(
    title: Annotated[str | None, typer.Argument(help="The session's title.")] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            "-p",
            help="Project id or name.",
            show_default='$WORKBENCH_PROJECT or "Terminal"',
        ),
    ] = None,
    review: Annotated[
        bool, typer.Option("--review", help="Review each code block before it runs.")
    ] = False,
    level: Annotated[
        Autonomy | None,
        typer.Option("--autonomy", help="auto, review_repairs or review (see `autonomy`)."),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Create a session."""
    chosen_level = level.value if level else "review" if review else None
    with connect() as client:
        chosen = lookup.project_or_default(client, project)
        created = client.create_session(chosen["id"], title, autonomy=chosen_level)
    if as_json:
        print_json(created)
    else:
        out.print(f"Created session {created['title']} ({created['id']}) in {chosen['name']}.")


@app.command()
def rename(
    session: SessionRef, title: Annotated[str, typer.Argument(help="The new title.")]
) -> None:
    """Rename a session."""
    with connect() as client:
        chosen = lookup.session(client, session)
        client.update_session(chosen["id"], title=title)
    out.print(f"Renamed session {chosen['title']} to {title}.")


@app.command()
def autonomy(
    session: SessionRef,
    level: Annotated[
        Autonomy,
        typer.Argument(
            help="auto: run code at once; review_repairs: only a repair (a retry after an "
            "error, a parallel repair's winner) waits for your approval; review: each code "
            "block waits for it."
        ),
    ],
) -> None:
    """Set how much the agent does without asking."""
    with connect() as client:
        chosen = lookup.session(client, session)
        client.update_session(chosen["id"], autonomy=level.value)
    out.print(f"Session {chosen['title']} now {_LEVELS[level]}.")


@app.command()
def review(
    session: SessionRef,
    switch: Annotated[Switch, typer.Argument(help="on: review each code block; off: run it.")],
) -> None:
    """Turn review mode on or off: with it on, each code block waits for your approval."""
    autonomy = "review" if switch is Switch.on else "auto"
    with connect() as client:
        chosen = lookup.session(client, session)
        client.update_session(chosen["id"], autonomy=autonomy)
    state = "reviews each code block" if autonomy == "review" else "runs code without asking"
    out.print(f"Session {chosen['title']} now {state}.")


class Branches(StrEnum):
    keep = "keep"
    delete = "delete"


@app.command()
def delete(
    session: SessionRef,
    yes: Yes = False,
    branches: Annotated[
        Branches | None,
        typer.Option(
            "--branches",
            help="A session with branches: keep them (standalone, with their past) or "
            "delete them too.",
        ),
    ] = None,
) -> None:
    """Delete a session with its runs and artifacts."""
    with connect() as client:
        chosen = lookup.session(client, session)
        if not yes:
            confirm(f"Delete session {chosen['title']} with its runs?")
        params = {"branches": branches.value} if branches else {}
        client.request("DELETE", f"/sessions/{chosen['id']}", params=params)
    out.print(f"Deleted session {chosen['title']}.")


@app.command()
def branch(
    session: SessionRef,
    after: Annotated[
        str,
        typer.Option(
            "--after", help="The question to branch after: its number in the session or run id."
        ),
    ],
    as_json: AsJson = False,
) -> None:
    """Start a branch: a new session that goes on after a question, with the variables as
    they were when it ended (its first question brings them back)."""
    with connect() as client:
        chosen = lookup.session(client, session)
        [run_id] = lookup.runs(client, chosen["id"], [after], "--after")
        made = client.json(
            "POST", f"/sessions/{chosen['id']}/branch", json={"after_run_id": run_id}
        )
    if as_json:
        print_json(made)
    else:
        out.print(f"Created session {made['title']} ({made['id']}).")


@app.command()
def tree(session: SessionRef, as_json: AsJson = False) -> None:
    """Show the tree of branches the session belongs to, from its root."""
    with connect() as client:
        chosen = lookup.session(client, session)
        found = client.json("GET", f"/sessions/{chosen['id']}/tree")
    if as_json:
        print_json(found)
        return
    lines: list[str] = []
    _tree_lines(found, 0, lines)
    if found.get("truncated"):
        lines.append("… (more branches than one answer shows)")
    out.print("\n".join(lines), markup=False, highlight=False)


def _tree_lines(node: dict[str, Any], depth: int, lines: list[str]) -> None:
    session = node["session"]
    line = f"{'  ' * depth}{session['title']} ({session['id']})"
    if node.get("after_query"):
        asked = " ".join(str(node["after_query"]).split())
        line += f"  after: {asked[:80]}"
    lines.append(line)
    for child in node.get("children") or []:
        _tree_lines(child, depth + 1, lines)

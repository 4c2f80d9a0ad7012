"""`workbench cells`: run your own Python in a session's sandbox, or SQL on a project source,
with no model; the cell's run streams to the terminal as `workbench ask` shows a run."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.text import Text

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import err
from app.cli.replies import Replies
from app.cli.stream import JsonView, RunView, View
from app.cli.watch import INTERRUPTED, RunWatcher, exit_with


def cells(
    session: Annotated[str, typer.Argument(help="Session id or title (or its start).")],
    python: Annotated[
        str | None,
        typer.Option("--python", help="Python to run in the session's sandbox (- : stdin)."),
    ] = None,
    sql: Annotated[
        str | None, typer.Option("--sql", help="SQL to run on --source (- : stdin).")
    ] = None,
    source: Annotated[
        str | None, typer.Option("--source", help="The source (name or id) of an SQL cell.")
    ] = None,
    project: Annotated[
        str | None,
        typer.Option("--project", "-p", help="Project id or name.", show_default="all"),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the run's events as JSON lines.")
    ] = False,
) -> None:
    """Run a cell in a session: its output, tables and charts, no model. A Python cell's
    last expression is shown, as in a notebook. Ctrl-C stops it on the server."""
    if (python is None) == (sql is None):
        raise typer.BadParameter("Give exactly one of --python CODE or --sql CODE.")
    if python is not None and source is not None:
        raise typer.BadParameter("--source is for an SQL cell.", param_hint="--source")
    language, code = ("python", python) if python is not None else ("sql", sql or "")
    if code == "-":
        code = sys.stdin.read()
    if not code.strip():
        raise typer.BadParameter("The cell is empty.", param_hint=f"--{language}")
    with connect() as client:
        chosen = lookup.session(client, session, project)
        view: View = JsonView(client, None) if as_json else RunView(client, None)
        watcher = RunWatcher(client, view, Replies(echo=as_json))
        try:
            end = watcher.watch(client.cell(chosen["id"], language, code, source))
        except KeyboardInterrupt:
            view.close()
            err.print(Text("Stopping the cell…", style="dim"))
            watcher.cancel(chosen["id"])
            err.print("Cancelled")
            raise typer.Exit(INTERRUPTED) from None
        finally:
            view.close()
    exit_with(end)

"""The `workbench` command: the public API from a terminal.

Every command talks to a running workbench over HTTP with an API token (see config.py).
Errors end the command with one sentence on stderr: what the server said, or why it could
not be reached; usage mistakes exit with 2, everything else with 1, Ctrl-C with 130.
"""

from __future__ import annotations

from typing import Annotated, Any

import click
import typer
from rich.text import Text
from typer.core import TyperGroup

from app.cli import (
    artifacts,
    auth,
    checks,
    files,
    jobs,
    knowledge,
    members,
    projects,
    runs,
    sessions,
    shares,
    sources,
)
from app.cli.admin import admin
from app.cli.ask import ask
from app.cli.audit import audit
from app.cli.cells import cells
from app.cli.client import ApiError
from app.cli.config import connect, load
from app.cli.evaluate import eval_command
from app.cli.export import export
from app.cli.output import Failure, err, out, print_json, print_table


class WorkbenchGroup(TyperGroup):
    """Shows failures as one sentence on stderr, not a traceback (Typer shows usage errors)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as exc:
            fail(_explain(exc), 1)
        except Failure as exc:
            fail(str(exc), exc.exit_code)
        except click.ClickException as exc:  # Click's own, as `eval` raises them
            fail(exc.format_message(), exc.exit_code)


def fail(message: str, exit_code: int) -> None:
    err.print(Text("Error: ", style="bold red") + Text(message))
    raise typer.Exit(exit_code)


def _explain(exc: ApiError) -> str:
    if exc.status == 0:
        return (
            f"{exc.detail}. Is the workbench running there? Set WORKBENCH_URL or run "
            "`workbench login --url URL`."
        )
    if exc.status == 401:
        return f"{exc} The token was refused: run `workbench login` (or fix WORKBENCH_TOKEN)."
    return str(exc)


app = typer.Typer(
    cls=WorkbenchGroup,
    name="workbench",
    help="Ask questions of your data from a terminal, and manage projects, files and sessions.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command()(ask)
app.command()(cells)
app.command()(export)
app.command()(auth.login)
app.command()(auth.logout)
app.command()(auth.whoami)
app.add_typer(projects.app, name="projects")
app.add_typer(sessions.app, name="sessions")
app.add_typer(files.app, name="files")
app.add_typer(runs.app, name="runs")
app.add_typer(artifacts.app, name="artifacts")
app.add_typer(sources.app, name="sources")
app.add_typer(knowledge.app, name="knowledge")
app.add_typer(members.app, name="members")
app.add_typer(shares.app, name="share")
app.add_typer(checks.app, name="checks")
app.add_typer(jobs.app, name="jobs")
app.command()(audit)
app.command("eval")(eval_command)
app.add_typer(admin, name="admin")


@app.command()
def models(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the models you may ask with (`ask --model`)."""
    with connect() as client:
        items = client.models()
    if as_json:
        print_json(items)
        return
    if not items:
        out.print(f"{load().url} offers no models: its LLM_MODEL is not set.")
        return
    rows = [(m["id"], m["label"], "yes" if m["default"] else "") for m in items]
    print_table(("ID", "LABEL", "DEFAULT"), rows)


def main() -> None:
    app(prog_name="workbench")

"""`workbench runs`: a session's runs; one run's steps; follow, answer, review or stop one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import click
import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import Failure, cost, err, out, print_json, print_table, shorten, tokens, when
from app.cli.replies import Replies
from app.cli.stream import JsonView, RunView, View, show_run
from app.cli.watch import INTERRUPTED, RunWatcher, exit_with

app = typer.Typer(help="List, inspect, follow and steer runs.", no_args_is_help=True)

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
RunId = Annotated[str, typer.Argument(help="The run's id.")]


@app.command("list")
def list_runs(
    session: Annotated[str, typer.Argument(help="Session id or title.")],
    as_json: AsJson = False,
) -> None:
    """List a session's runs, oldest first."""
    with connect() as client:
        chosen = lookup.session(client, session)
        items = client.runs(chosen["id"])
    if as_json:
        print_json(items)
        return
    if not items:
        out.print(f"Session {chosen['title']} has no runs yet.")
        return
    rows = [
        (
            run["id"],
            run["status"],
            shorten(run["query"], 50),
            (run.get("asked_by") or {}).get("email", ""),
            str(len(run.get("steps") or [])),
            tokens(run.get("tokens_in"), run.get("tokens_out")),
            cost(run.get("cost_usd")),
            when(run.get("started_at") or run.get("created_at")),
        )
        for run in items
    ]
    print_table(
        ("ID", "STATUS", "QUESTION", "ASKED BY", "STEPS", "TOKENS", "COST", "STARTED"),
        rows,
        wrap=("QUESTION",),
        optional=("TOKENS", "COST", "STEPS", "STARTED", "ASKED BY"),
    )


@app.command()
def show(run: RunId, as_json: AsJson = False) -> None:
    """Show a run: its question, steps (thought, code, output), artifacts and answer."""
    with connect() as client:
        stored = client.run(run)
    if as_json:
        print_json(stored)
    else:
        show_run(stored)


@app.command()
def follow(
    run: RunId,
    save: Annotated[
        Path | None,
        typer.Option(
            "--save",
            help="Download every artifact into this folder (a chart also as an HTML page).",
            file_okay=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the run's events as JSON lines.")
    ] = False,
) -> None:
    """Replay a run and follow it live to its end, answering what it waits for.

    Ctrl-C only stops following; the run goes on (`workbench runs cancel` stops it).
    """
    with connect() as client:
        view: View = JsonView(client, save) if as_json else RunView(client, save)
        watcher = RunWatcher(client, view, Replies(echo=as_json))
        try:
            end = watcher.watch(client.follow(run))
        except KeyboardInterrupt:
            view.close()
            err.print(
                f"Stopped following; the run goes on. `workbench runs cancel {run}` stops it."
            )
            raise typer.Exit(INTERRUPTED) from None
        finally:
            view.close()
    exit_with(end)


@app.command()
def cancel(run: RunId) -> None:
    """Stop a run (at its next safe point)."""
    with connect() as client:
        stopped = client.cancel(run)
    out.print(f"Run {run} is {stopped['status']}.")


@app.command()
def answer(
    run: RunId, text: Annotated[str, typer.Argument(help="Your answer to the agent's question.")]
) -> None:
    """Answer the question a run waits on; the run goes on."""
    with connect() as client:
        client.answer(run, text)
    out.print(f"Answered. `workbench runs follow {run}` follows the rest.")


@app.command()
def approve(run: RunId) -> None:
    """Let the code a run waits on (review mode) run as written."""
    with connect() as client:
        client.decide(run, "approve")
    out.print(f"Approved. `workbench runs follow {run}` follows the rest.")


@app.command()
def reject(
    run: RunId,
    feedback: Annotated[
        str | None, typer.Argument(help="What the agent should do instead.")
    ] = None,
) -> None:
    """Refuse the code a run waits on (review mode); the agent reads why and tries again."""
    with connect() as client:
        client.decide(run, "reject", feedback=feedback)
    out.print(f"Rejected. `workbench runs follow {run}` follows the rest.")


@app.command()
def edit(
    run: RunId,
    code: Annotated[
        Path | None,
        typer.Option("--code", help="A file with the code to run instead.", show_default="$EDITOR"),
    ] = None,
) -> None:
    """Change the code a run waits on (review mode): yours runs instead."""
    with connect() as client:
        pending = client.run(run).get("pending") or {}
        if pending.get("kind") != "approval":
            raise Failure(f"Run {run} does not wait for a review.")
        if code is not None:
            text: str | None = code.read_text()
        else:
            text = click.edit(str(pending.get("code") or ""), extension=".py", require_save=True)
        if not text or not text.strip():
            raise Failure("No code given, so nothing changed: the run still waits.")
        client.decide(run, "edit", code=text)
    out.print(f"Edited. `workbench runs follow {run}` follows the rest.")

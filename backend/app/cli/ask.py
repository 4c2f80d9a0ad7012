"""`workbench ask`: a question to a session, its run streamed to the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from app.cli import lookup
from app.cli.client import ApiError, WorkbenchClient
from app.cli.config import connect
from app.cli.output import err, shorten, size
from app.cli.replies import Replies
from app.cli.stream import JsonView, RunView, View
from app.cli.watch import INTERRUPTED, RunWatcher, exit_with

TITLE_LENGTH = 80


def ask(
    question: Annotated[
        list[str], typer.Argument(help="The question (quotes are optional).", show_default=False)
    ],
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            "-p",
            help="Project id or name.",
            show_default='$WORKBENCH_PROJECT, else "Terminal"',
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session", "-s", help="Session id or title to continue.", show_default="new"
        ),
    ] = None,
    files: Annotated[
        list[Path] | None,
        typer.Option(
            "--file",
            "-f",
            help="Upload this file to the project first (same name: replaced). Repeatable.",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="A model of `workbench models`.")
    ] = None,
    attempts: Annotated[
        int | None,
        typer.Option(
            "--attempts",
            "-n",
            min=1,
            max=5,
            help="Independent attempts that answer at once and vote (1-5); the verdict "
            "says whether they agree.",
            show_default="the project's default",
        ),
    ] = None,
    review: Annotated[
        bool | None,
        typer.Option(
            "--review/--no-review",
            help="Review each code block before it runs (sets the session's mode).",
        ),
    ] = None,
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
    """Ask a question and follow its run: thoughts, code, outputs, artifacts, the answer.

    Questions the agent asks and code reviews are answered at the prompt (or, when stdin
    is not a terminal, from its lines). Ctrl-C stops the run on the server.
    """
    text = " ".join(question).strip()
    if not text:
        raise typer.BadParameter("The question is empty.", param_hint="QUESTION")
    with connect() as client:
        existing = lookup.session(client, session, project) if session else None
        project_id = (
            existing["project_id"] if existing else lookup.project_or_default(client, project)["id"]
        )
        uploaded = [_upload(client, project_id, path) for path in files or []]
        chosen = _session(client, existing, project_id, text, review)
        err.print(
            Text(
                f"Session {chosen['id']} ({chosen['title']}) · continue it with "
                f"--session {chosen['id']}",
                style="dim",
            ),
            soft_wrap=True,
        )
        view: View = JsonView(client, save) if as_json else RunView(client, save)
        watcher = RunWatcher(client, view, Replies(echo=as_json))
        try:
            end = watcher.watch(
                client.ask(
                    chosen["id"],
                    text,
                    file_ids=[f["id"] for f in uploaded],
                    model=model,
                    attempts=attempts,
                )
            )
        except KeyboardInterrupt:
            view.close()
            err.print(Text("Stopping the run…", style="dim"))
            watcher.cancel(chosen["id"])
            err.print("Cancelled")
            raise typer.Exit(INTERRUPTED) from None
        except ApiError as exc:
            if existing is None and watcher.run_id is None and exc.status >= 400:
                client.delete_session(chosen["id"])  # refused: leave no empty session behind
            raise
        finally:
            view.close()
    exit_with(end)


def _session(
    client: WorkbenchClient,
    existing: dict[str, Any] | None,
    project_id: str,
    question: str,
    review: bool | None,
) -> dict[str, Any]:
    """The session to ask in: the given one (in the review mode asked for, if any), else a
    new one titled after the question."""
    autonomy = None if review is None else "review" if review else "auto"
    if existing is None:
        return client.create_session(project_id, shorten(question, TITLE_LENGTH), autonomy=autonomy)
    if autonomy and existing["autonomy"] != autonomy:
        return client.update_session(existing["id"], autonomy=autonomy)
    return existing


def _upload(client: WorkbenchClient, project_id: str, path: Path) -> dict[str, Any]:
    uploaded = client.upload(project_id, path)
    err.print(Text(f"Uploaded {uploaded['name']} ({size(uploaded.get('size'))})", style="dim"))
    return uploaded

"""`workbench files`: list, upload, download and delete a project's files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import confirm, out, print_json, print_table, size, when

app = typer.Typer(help="List and manage the files of projects.")

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
InProject = Annotated[
    str | None, typer.Option("--project", "-p", help="Project id or name.", show_default="all")
]
FileRef = Annotated[str, typer.Argument(help="File id or name.")]


@app.callback(invoke_without_command=True)
def files(ctx: typer.Context, project: InProject = None, as_json: AsJson = False) -> None:
    """List and manage files (alone: list them)."""
    if ctx.invoked_subcommand is None:
        list_files(project, as_json)


@app.command("list")
def list_files(project: InProject = None, as_json: AsJson = False) -> None:
    """List the files of a project, or of every project."""
    with connect() as client:
        projects = [lookup.project(client, project)] if project else client.projects()
        names = {p["id"]: p["name"] for p in projects}
        items: list[dict[str, Any]] = [f for p in projects for f in client.files(p["id"])]
    if as_json:
        print_json(items)
        return
    if not items:
        out.print("No files yet: `workbench files upload PATH` adds one.")
        return
    rows = [
        (
            f["id"],
            f["name"],
            names.get(f["project_id"], ""),
            size(f.get("size")),
            f.get("content_type", ""),
            when(f.get("updated_at") or f.get("created_at")),
        )
        for f in items
    ]
    print_table(
        ("ID", "NAME", "PROJECT", "SIZE", "TYPE", "UPDATED"),
        rows,
        wrap=("NAME", "PROJECT"),
        optional=("TYPE", "PROJECT", "UPDATED"),
    )


@app.command()
def upload(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Files to upload.", exists=True, dir_okay=False, readable=True),
    ],
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            "-p",
            help="Project id or name.",
            show_default='$WORKBENCH_PROJECT or "Terminal"',
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Upload files to a project (a file of the same name is replaced)."""
    uploaded = []
    with connect() as client:
        chosen = lookup.project_or_default(client, project)
        for path in paths:
            uploaded.append(client.upload(chosen["id"], path))
            if not as_json:
                item = uploaded[-1]
                out.print(f"Uploaded {item['name']} ({size(item['size'])}) to {chosen['name']}.")
    if as_json:
        print_json(uploaded)


@app.command()
def download(
    file: FileRef,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Where to write it.", show_default="its name, here"),
    ] = None,
    project: InProject = None,
) -> None:
    """Download a file's original bytes."""
    with connect() as client:
        chosen = lookup.file(client, file, project)
        target = client.download_file(chosen["id"], output or Path(chosen["name"]))
    out.print(f"Wrote {target} ({size(target.stat().st_size)}).")


@app.command()
def delete(file: FileRef, project: InProject = None, yes: Yes = False) -> None:
    """Delete a file from its project."""
    with connect() as client:
        chosen = lookup.file(client, file, project)
        if not yes:
            confirm(f"Delete file {chosen['name']}?")
        client.delete_file(chosen["id"])
    out.print(f"Deleted file {chosen['name']}.")

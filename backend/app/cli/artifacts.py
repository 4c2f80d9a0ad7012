"""`workbench artifacts`: the charts, tables and files a session's runs made."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli import lookup
from app.cli.config import connect
from app.cli.output import out, print_json, print_table, size, when

app = typer.Typer(help="List and download artifacts (charts, tables, files).", no_args_is_help=True)


@app.command("list")
def list_artifacts(
    session: Annotated[str, typer.Argument(help="Session id or title.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List a session's artifacts."""
    with connect() as client:
        chosen = lookup.session(client, session)
        items = client.artifacts(chosen["id"])
    if as_json:
        print_json(items)
        return
    if not items:
        out.print(f"Session {chosen['title']} has no artifacts yet.")
        return
    rows = [
        (
            a["id"],
            a["name"],
            a["kind"],
            size(a.get("size")),
            str(a.get("step", "")),
            when(a.get("created_at")),
        )
        for a in items
    ]
    print_table(
        ("ID", "NAME", "KIND", "SIZE", "STEP", "CREATED"),
        rows,
        wrap=("NAME",),
        optional=("STEP", "SIZE", "CREATED"),
    )


@app.command()
def download(
    artifact: Annotated[str, typer.Argument(help="The artifact's id.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Where to write it.", show_default="its name, here"),
    ] = None,
) -> None:
    """Download an artifact (plotly figures are JSON, tables JSON, images PNG/SVG)."""
    with connect() as client:
        found = client.artifact(artifact)
        target = client.download_artifact(found["id"], output or Path(Path(found["name"]).name))
    out.print(f"Wrote {target} ({size(target.stat().st_size)}).")

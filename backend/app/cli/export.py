"""`workbench export`: a session as a Jupyter notebook, a standalone HTML report or Markdown."""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from app.cli import lookup
from app.cli.client import WorkbenchClient
from app.cli.config import connect
from app.cli.output import err, out, size


class Format(StrEnum):
    ipynb = "ipynb"
    html = "html"
    md = "md"


def export(
    session: Annotated[str, typer.Argument(help="Session id or title.")],
    fmt: Annotated[
        Format, typer.Option("--format", "-F", help="ipynb: notebook; html: report; md: Markdown.")
    ] = Format.ipynb,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="File or folder to write.",
            show_default="the server's file name, here",
        ),
    ] = None,
    runs: Annotated[
        str | None,
        typer.Option(
            "--runs",
            help="Only these questions: their numbers in the session (1,3) or run ids.",
            show_default="every run; html: those that succeeded",
        ),
    ] = None,
    with_files: Annotated[
        bool,
        typer.Option(
            "--with-files",
            help="Also download the files it read next to it (to rerun a notebook).",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --with-files: replace local files that differ."),
    ] = False,
) -> None:
    """Export a session: questions, code, outputs, charts, tables and answers."""
    with connect() as client:
        chosen = lookup.session(client, session)
        run_ids = None
        if runs is not None:
            refs = [part.strip() for part in runs.split(",") if part.strip()]
            run_ids = lookup.runs(client, chosen["id"], refs, "--runs")
        written = client.export(chosen["id"], fmt.value, output or Path.cwd(), run_ids)
        out.print(f"Wrote {written} ({size(written.stat().st_size)}).")
        if with_files:
            for item in _files_read(client, chosen["project_id"], written, fmt):
                _bring(client, item, written.parent, force)


def _files_read(
    client: WorkbenchClient, project_id: str, written: Path, fmt: Format
) -> list[dict[str, Any]]:
    """The files to rerun the export next to: those the notebook says the session read (at
    the version it read); for a report or Markdown, the project's files."""
    if fmt is not Format.ipynb:
        return client.files(project_id)
    listed = json.loads(written.read_text())["metadata"].get("workbench", {}).get("files", [])
    return [dict(f) for f in listed]


def _bring(client: WorkbenchClient, item: dict[str, Any], folder: Path, force: bool) -> None:
    """Download a file into `folder` (the version named, if any); an identical copy there is
    kept as it is."""
    target = folder / Path(item["name"]).name
    if target.exists():
        if _sha256(target) == item.get("sha256"):
            err.print(Text(f"{target} is already there.", style="dim"))
            return
        if not force:
            err.print(
                Text(
                    f"Kept {target}: it differs from the project's {item['name']} "
                    "(--force replaces it).",
                    style="yellow",
                )
            )
            return
    if item.get("version"):
        client.download_version(item["id"], int(item["version"]), target)
    else:
        client.download_file(item["id"], target)
    out.print(f"Wrote {target} ({size(target.stat().st_size)}).")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()

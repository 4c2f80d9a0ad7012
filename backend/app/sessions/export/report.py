"""The report renderer: a session as one HTML file with nothing to fetch, from the Jinja
templates beside it: interactive charts (plotly.js inline, only when there is a chart),
images as data URIs, tables with numbers written for reading, answers as Markdown without
raw HTML, and the files the code wrote attached as downloads (data URIs of
application/octet-stream: saved, never shown or run; their size limits are in gather.py).
Everything that came from the model, the code or the data is escaped.
"""

from __future__ import annotations

import base64
import csv
import json
import uuid
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from app.files import excel
from app.sessions.export.gather import ExportArtifact, ExportRun, SessionExport
from app.sessions.export.markdown_text import (
    check_sentence,
    human_size,
    query_caption,
    readable_rows,
    steps_summary,
    when,
)

# Rows of a table shown in the report and the notebook (its preview holds up to 1000).
TABLE_ROWS = 100

TEMPLATES = Path(__file__).parent / "templates"


def new_nonce() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def policy(nonce: str) -> str:
    """The report's Content-Security-Policy (in its <meta>): nothing is fetched, and the only
    scripts that run are its own (plotly.js and the lines that draw the charts), by nonce."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; "
        "img-src data: blob:; font-src data:"
    )


def to_html(export: SessionExport, nonce: str | None = None) -> bytes:
    """The report; `nonce` (default: a new one) is what its scripts carry."""
    nonce = nonce or new_nonce()
    page = (
        _templates()
        .get_template("report.html.j2")
        .render(
            export=export,
            nonce=nonce,
            policy=Markup(policy(nonce)),  # ours, with a base64 nonce: nothing to escape
            plotly_js=Markup(_plotly_js()) if export.has_charts else None,
            when=when,
            size=human_size,
            markdown=_markdown,
            table_html=lambda t: Markup(table_html(t)),
            script_json=_script_json,
            b64=lambda data: base64.b64encode(data).decode(),
            chart_title=chart_title,
            report_figure=report_figure,
            check_sentence=check_sentence,
            steps_summary=steps_summary,
            query_caption=query_caption,
            attachments=attachments,
            attached=attached,
            base_name=lambda name: Path(name).name,
        )
    )
    return page.encode()


def chart_title(figure: dict[str, Any]) -> str | None:
    title = (figure.get("layout") or {}).get("title")
    text = title.get("text") if isinstance(title, dict) else title
    return str(text) if text else None


def report_figure(figure: dict[str, Any]) -> dict[str, Any]:
    """The figure as the report draws it: a title may push the plot down (automargin), so
    that the lines the page breaks it into at the chart's width (the report's script, on a
    phone too) never run over the plot or off the chart."""
    layout = figure.get("layout")
    if not isinstance(layout, dict) or chart_title(figure) is None:
        return figure
    title = layout["title"]
    title = {"text": title} if not isinstance(title, dict) else title
    return {**figure, "layout": {**layout, "title": {**title, "automargin": True}}}


def table_html(table: dict[str, Any], limit: int = TABLE_ROWS) -> str:
    return str(
        _templates()
        .get_template("table.html.j2")
        .render(table=table, limit=limit, readable_rows=readable_rows)
    )


def attached(file: ExportArtifact) -> str | None:
    """A file's bytes as the report attaches them (base64), a CSV or TSV with every cell a
    spreadsheet would run as a formula escaped, as its download is; None when it cannot be
    read as one (it is then left in the workbench, where its download escapes it)."""
    data = file.data
    delimiter = excel.SPREADSHEET_DELIMITERS.get(Path(file.name).suffix.lower())
    if data is not None and delimiter is not None:
        try:
            data = excel.escape_csv_bytes(data, delimiter=delimiter)
        except csv.Error:
            return None
    return None if data is None else base64.b64encode(data).decode()


def attachments(run: ExportRun) -> list[ExportArtifact]:
    """The files a run's code wrote, those its answer names first."""
    files = [a for s in run.steps for a in s.artifacts if a.kind == "file"]
    answer = run.final_answer or ""
    return sorted(files, key=lambda a: Path(a.name).name not in answer)


@cache
def _templates() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _markdown_renderer() -> MarkdownIt:
    # No raw HTML: an answer is the model's text, and the model may have read hostile data.
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _markdown(text: str) -> Markup:
    return Markup(_markdown_renderer().render(text))


def _script_json(value: Any) -> Markup:
    """JSON to place inside <script type="application/json">: nothing in it can end the
    script element or start a comment, whatever strings the figure holds."""
    text = json.dumps(value, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    # Inside a <script> element: the bundle must not close it early.
    return str(get_plotlyjs()).replace("</script", "<\\/script")

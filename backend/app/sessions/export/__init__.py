"""A session taken out of the workbench: a Jupyter notebook, a standalone report, Markdown.

`gather` reads what the session recorded (its runs, steps and artifacts, the project's
files) into plain values, holding a database connection only for that; the renderers are
pure functions of those values, run in a worker thread.

- The notebook reruns in Jupyter next to the project's files: its first cell checks they
  are there (or fetches them from the workbench with a token), and defines the two helpers
  the agent's code calls, `final_answer` and `ask_user` (which replays the answers given).
  Each question is a Markdown cell, each step's code a code cell with its recorded output,
  charts as their Plotly and PNG outputs, tables as HTML. Code that failed or that the user
  rejected is shown in Markdown, so "Run all" goes through.
- The report is one HTML file with nothing to fetch: interactive charts (plotly.js inline,
  only when there is a chart), images as data URIs, tables, answers. Everything that came
  from the model, the code or the data is escaped; answers are Markdown without raw HTML.
- Markdown: the same, with tables as Markdown and images inline.

gather.py reads the values; notebook.py, report.py (with templates/) and markdown.py render
them, markdown_text.py holds the Markdown they share. Callers use the names exported here.
"""

from __future__ import annotations

import re
from typing import Literal

from app.sessions.export.gather import SessionExport, gather
from app.sessions.export.markdown import to_markdown
from app.sessions.export.notebook import to_notebook
from app.sessions.export.report import to_html

__all__ = ["MEDIA_TYPES", "ExportFormat", "SessionExport", "file_name", "gather", "render"]

ExportFormat = Literal["ipynb", "html", "md"]

MEDIA_TYPES: dict[str, str] = {
    "ipynb": "application/x-ipynb+json",
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}


def file_name(export: SessionExport, fmt: ExportFormat) -> str:
    stem = re.sub(r"[\x00-\x1f/\\:*?\"<>|]+", " ", export.title).strip(" .") or "session"
    return f"{stem[:120]}.{fmt}"


def render(export: SessionExport, fmt: ExportFormat) -> bytes:
    if fmt == "ipynb":
        return to_notebook(export)
    if fmt == "html":
        return to_html(export)
    return to_markdown(export)

"""A session taken out of the workbench: a Jupyter notebook, a standalone report, Markdown.

`gather` reads what the session recorded (its runs, all or those chosen, their steps and
artifacts, the files they read) into plain values, holding a database connection only for
that; the renderers are pure functions of those values, run in a worker thread.

- The notebook reruns top to bottom in a plain Jupyter kernel next to the files the session
  read: its first cell defines what the sandbox gave the code (`final_answer`, `ask_user`
  replaying the answers given), then checks those files are there (or fetches them from
  the workbench with a token). Each question is a Markdown cell, each step's code a code
  cell with its recorded output, charts as their Plotly and PNG outputs, tables as HTML. Of
  a failed step the cell runs what ran before the error (replay.py); code that never ran
  is shown in Markdown, so "Run all" goes through.
- The report is one HTML file with nothing to fetch, made to send: by default the runs that
  succeeded, interactive charts (plotly.js inline, only when there is a chart), images as
  data URIs, tables with readable numbers, answers, the files the code wrote attached.
  Everything that came from the model, the code or the data is escaped; answers are
  Markdown without raw HTML.
- Markdown: the same, with tables as Markdown and images inline.
- A shared link (app.shares) shows the report of the runs it holds, and nothing else of
  the session: not even how many questions it has.

gather.py reads the values; notebook.py (with replay.py), report.py (with templates/) and
markdown.py render them, markdown_text.py holds the Markdown they share. Callers use the
names exported here.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import ServiceUnavailable
from app.infra.storage import ObjectStorage
from app.models import Session
from app.sessions.export import report
from app.sessions.export.gather import SessionExport, UnknownRuns
from app.sessions.export.gather import gather as gather_values
from app.sessions.export.markdown import to_markdown
from app.sessions.export.notebook import to_notebook
from app.sessions.export.report import to_html

__all__ = [
    "MEDIA_TYPES",
    "SLOTS",
    "ExportFormat",
    "SessionExport",
    "UnknownRuns",
    "file_name",
    "gather",
    "gather_shared",
    "render",
    "shared_report",
    "slot",
]

ExportFormat = Literal["ipynb", "html", "md"]

MEDIA_TYPES: dict[str, str] = {
    "ipynb": "application/x-ipynb+json",
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}


async def gather(
    db: AsyncSession,
    storage: ObjectStorage,
    session: Session,
    server_url: str,
    fmt: ExportFormat,
    run_ids: Sequence[uuid.UUID] | None = None,
) -> SessionExport:
    """What the export in `fmt` shows: the runs chosen, or by default every run (the
    report: those that succeeded, to send; every run when none did).

    Raises:
        UnknownRuns: `run_ids` names a run that is not the session's, or none.
    """
    return await gather_values(
        db,
        storage,
        session,
        server_url,
        run_ids=run_ids,
        succeeded_only=fmt == "html",
        attach_files=fmt == "html",
    )


async def gather_shared(
    db: AsyncSession, storage: ObjectStorage, session: Session, run_ids: Sequence[uuid.UUID]
) -> SessionExport:
    """What a shared link shows: the report of exactly these runs (the files their code
    wrote attached), counted as all there is.

    Raises:
        UnknownRuns: a run is no longer the session's.
    """
    shown = await gather_values(db, storage, session, "", run_ids=run_ids, attach_files=True)
    shown.run_total = len(shown.runs)
    return shown


def shared_report(export: SessionExport) -> tuple[bytes, str]:
    """The report of a shared link, and the Content-Security-Policy of its page (the one
    the report carries in its <meta>, with the same nonce)."""
    nonce = report.new_nonce()
    return to_html(export, nonce), report.policy(nonce)


class ExportSlots:
    """At most `limit` exports are built at once (each is held in memory while it is):
    past that a request answers 503 with Retry-After rather than queueing unbounded."""

    def __init__(self, limit: int):
        self.limit = limit
        self.busy = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.busy >= self.limit:
                return False
            self.busy += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self.busy -= 1


SLOTS = ExportSlots(4)


@contextmanager
def slot() -> Iterator[None]:
    """Build an export (or a shared report) inside: one of SLOTS, or 503 server_busy."""
    if not SLOTS.take():
        raise ServiceUnavailable(
            "Too many exports are being made right now; try again in a few seconds.",
            code="server_busy",
            retry_after=5,
        )
    try:
        yield
    finally:
        SLOTS.give_back()


# Longest file name stem: room for " (1)" and the extension within common limits.
NAME_CHARS = 80


def file_name(export: SessionExport, fmt: ExportFormat) -> str:
    """The download's name, made from the session's title: letters, digits, spaces and
    `-_.,()&+'` only (no path, quote, control or ellipsis character), single spaces, cut at
    a word under NAME_CHARS characters with nothing added."""
    kept = re.sub(r"[^\w\-.,()&+' ]+", " ", export.title)
    stem = " ".join(kept.split()).strip(" .-")
    if len(stem) > NAME_CHARS:
        stem = stem[: NAME_CHARS + 1].rsplit(" ", 1)[0] if " " in stem[:NAME_CHARS] else stem
        stem = stem[:NAME_CHARS].rstrip(" .,-")
    return f"{stem or 'session'}.{fmt}"


def render(export: SessionExport, fmt: ExportFormat) -> bytes:
    if fmt == "ipynb":
        return to_notebook(export)
    if fmt == "html":
        return to_html(export)
    return to_markdown(export)

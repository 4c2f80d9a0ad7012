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
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal

import nbformat
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import release_connection
from app.infra.storage import ObjectNotFound, ObjectStorage
from app.models import Artifact, File, Project, Run, Session
from app.sandbox import REFUSED_PREFIX

ExportFormat = Literal["ipynb", "html", "md"]

# What an export says in place of a step that tried something the sandbox refused.
REFUSED_STEP = "This step tried something the sandbox refuses; it is left out of the export."
MEDIA_TYPES: dict[str, str] = {
    "ipynb": "application/x-ipynb+json",
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}

# Artifacts are embedded up to this many bytes in all (a chart or image past it is named,
# with where to get it, instead): an export is built in memory, so this bounds its size.
EMBED_LIMIT_BYTES = 48 * 1024 * 1024
# Rows of a table shown in the report and the notebook (its preview holds up to 1000).
TABLE_ROWS = 100
MARKDOWN_TABLE_ROWS = 20

TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class ExportArtifact:
    id: str
    kind: str
    name: str
    mime: str
    size: int
    data: bytes | None  # None: too big to embed, or missing from storage

    @property
    def url(self) -> str:
        return f"/api/v1/artifacts/{self.id}/content"

    def table(self) -> dict[str, Any] | None:
        if self.kind != "table" or self.data is None:
            return None
        try:
            value = json.loads(self.data)
        except ValueError:
            return None
        return value if isinstance(value, dict) and "columns" in value else None

    def figure(self) -> dict[str, Any] | None:
        if self.kind != "plotly" or self.data is None:
            return None
        try:
            value = json.loads(self.data)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass
class ExportStep:
    index: int
    thought: str | None
    code: str | None
    output: str | None
    error: str | None
    artifacts: list[ExportArtifact] = field(default_factory=list)
    question: tuple[str, str] | None = None  # (what the agent asked, what the user answered)
    decision: dict[str, Any] | None = None  # the user's review of this step's code

    @property
    def runnable(self) -> bool:
        """Code a rerun should run: it ran here without an error."""
        return bool(self.code and self.code.strip()) and not self.error


@dataclass
class ExportRun:
    number: int
    query: str
    model: str
    status: str
    final_answer: str | None
    error: str | None
    created_at: datetime
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    steps: list[ExportStep]
    plans: list[dict[str, Any]]
    verifications: list[dict[str, Any]]
    answers: list[str]  # the user's answers to ask_user, in order


@dataclass
class ExportFile:
    id: str
    name: str
    size: int
    sha256: str


@dataclass
class SessionExport:
    session_id: str
    title: str
    project: str
    files: list[ExportFile]
    runs: list[ExportRun]
    exported_at: datetime
    server_url: str

    @property
    def has_charts(self) -> bool:
        return any(a.figure() is not None for r in self.runs for s in r.steps for a in s.artifacts)


async def gather(
    db: AsyncSession, storage: ObjectStorage, session: Session, server_url: str
) -> SessionExport:
    """Everything the export shows. The connection goes back before artifacts are read."""
    project = await db.get(Project, session.project_id)
    runs = list(
        await db.scalars(
            select(Run).where(Run.session_id == session.id).order_by(Run.created_at, Run.id)
        )
    )
    files = list(
        await db.scalars(
            select(File).where(File.project_id == session.project_id).order_by(File.name)
        )
    )
    await release_connection(db)

    budget = EMBED_LIMIT_BYTES
    exported_runs = []
    for number, run in enumerate(runs, start=1):
        by_step: dict[int, list[Artifact]] = {}
        for artifact in run.artifacts:
            by_step.setdefault(artifact.step, []).append(artifact)
        steps = [
            _export_step(s.index, s.thought, s.code, s.output, s.error) for s in run.steps
        ] or [ExportStep(1, None, None, None, None)]
        for index, artifacts in sorted(by_step.items()):
            step = next((s for s in steps if s.index == index), steps[-1])
            # A table shown with display() also came as a CSV of all its rows: the table
            # is what the export shows (a rerun makes it again).
            tables = {Path(a.name).stem for a in artifacts if a.kind == "table"}
            for artifact in artifacts:
                if artifact.kind == "file" and Path(artifact.name).stem in tables:
                    continue
                data = None
                if artifact.size <= budget:
                    data = await _read(storage, artifact.storage_key)
                    budget -= len(data or b"")
                step.artifacts.append(
                    ExportArtifact(
                        str(artifact.id),
                        artifact.kind,
                        artifact.name,
                        artifact.mime,
                        artifact.size,
                        data,
                    )
                )
        for asked in run.inputs or []:
            if (asking := _step(steps, asked.get("step"))) is not None:
                asking.question = (str(asked.get("question", "")), str(asked.get("answer", "")))
        for decision in run.approvals or []:
            if (decided := _step(steps, decision.get("step"))) is not None:
                decided.decision = dict(decision)
        exported_runs.append(
            ExportRun(
                number=number,
                query=run.query,
                model=run.model,
                status=run.status,
                final_answer=run.final_answer,
                error=run.error,
                created_at=run.created_at,
                tokens_in=run.tokens_in,
                tokens_out=run.tokens_out,
                cost_usd=run.cost_usd,
                steps=[s for s in steps if s.code or s.output or s.error or s.artifacts],
                plans=list(run.plans or []),
                verifications=list(run.verifications or []),
                answers=[str(i.get("answer", "")) for i in run.inputs or []],
            )
        )
    return SessionExport(
        session_id=str(session.id),
        title=session.title,
        project=project.name if project else "",
        files=[ExportFile(str(f.id), f.name, f.size, f.sha256) for f in files],
        runs=exported_runs,
        exported_at=datetime.now(UTC),
        server_url=server_url.rstrip("/"),
    )


def _export_step(
    index: int, thought: str | None, code: str | None, output: str | None, error: str | None
) -> ExportStep:
    """A step as exports show it: one that tried something the sandbox refused is left out
    whole (its code must not run anywhere, least of all outside the sandbox)."""
    if error is not None and error.startswith(REFUSED_PREFIX):
        return ExportStep(index, None, None, None, REFUSED_STEP)
    return ExportStep(index, thought, code, output, error)


def _step(steps: list[ExportStep], index: object) -> ExportStep | None:
    return next((s for s in steps if s.index == index), None)


async def _read(storage: ObjectStorage, key: str) -> bytes | None:
    chunks = []
    try:
        async for chunk in storage.iter_bytes(key):
            chunks.append(chunk)
    except ObjectNotFound:
        return None
    return b"".join(chunks)


def file_name(export: SessionExport, fmt: ExportFormat) -> str:
    stem = re.sub(r"[\x00-\x1f/\\:*?\"<>|]+", " ", export.title).strip(" .") or "session"
    return f"{stem[:120]}.{fmt}"


def render(export: SessionExport, fmt: ExportFormat) -> bytes:
    if fmt == "ipynb":
        return to_notebook(export)
    if fmt == "html":
        return to_html(export)
    return to_markdown(export)


# -- the notebook ------------------------------------------------------------------------

SETUP = '''\
# Workbench session {title!r} (project {project!r}), exported {exported}.
#
# WARNING: the code cells below were written by an LLM. In the workbench they ran inside a
# sandbox; here they run on YOUR machine, as you, with your files and your network, and
# nothing stops them. Read them first. To run them anyway, set RUN_UNSANDBOXED = True
# below, or set the environment variable WORKBENCH_RUN_UNSANDBOXED=1 before starting Jupyter.
RUN_UNSANDBOXED = False

import os

if not (RUN_UNSANDBOXED or os.environ.get("WORKBENCH_RUN_UNSANDBOXED") == "1"):
    raise RuntimeError(
        "This notebook runs LLM-written code on this machine, outside the Workbench sandbox. "
        "Read the code, then set RUN_UNSANDBOXED = True in this cell (or the environment "
        "variable WORKBENCH_RUN_UNSANDBOXED=1) to run it."
    )

# The analysis reads the project's files by name from the working directory. Keep them
# next to this notebook (`workbench export SESSION --with-files` downloads them), or set
# WORKBENCH_TOKEN (an API token) and this cell fetches the missing ones from the workbench.
import urllib.request
from pathlib import Path

from IPython.display import Markdown, display

WORKBENCH_URL = os.environ.get("WORKBENCH_URL", {server_url!r})
SESSION_FILES = {files}  # name: file id in the workbench

for _name, _file_id in SESSION_FILES.items():
    if Path(_name).is_file():
        continue
    if not os.environ.get("WORKBENCH_TOKEN"):
        raise FileNotFoundError(
            f"{{_name}} is not next to this notebook: put it there, or set WORKBENCH_TOKEN "
            "to fetch it from the workbench."
        )
    _request = urllib.request.Request(
        f"{{WORKBENCH_URL}}/api/v1/files/{{_file_id}}/content",
        headers={{"Authorization": f"Bearer {{os.environ['WORKBENCH_TOKEN']}}"}},
    )
    with urllib.request.urlopen(_request) as _response, open(_name, "wb") as _out:
        _out.write(_response.read())
    print(f"fetched {{_name}}")


def final_answer(answer):
    """How the agent gave its answer: shown here as Markdown."""
    display(Markdown(str(answer)))
    return answer


_ANSWERS = iter({answers})  # what the user answered when the agent asked


def ask_user(question):
    """How the agent asked the user: the answers given then are replayed, in order."""
    answer = next(_ANSWERS, None)
    if answer is None:
        answer = input(f"{{question}} ")
    print(f"{{question}} → {{answer}}")
    return answer
'''


UNSANDBOXED_WARNING = (
    "> **Warning: this notebook runs code an LLM wrote, on your own machine, outside the "
    "Workbench sandbox.** In the workbench that code ran isolated, with no network and no "
    "access to your files; here it runs as you, with both. Read every code cell before you "
    "run it. The first code cell stops unless you set `RUN_UNSANDBOXED = True` in it or the "
    "environment variable `WORKBENCH_RUN_UNSANDBOXED=1`."
)


def to_notebook(export: SessionExport) -> bytes:
    notebook = new_notebook()
    notebook.metadata.update(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "workbench": {
                "session_id": export.session_id,
                "title": export.title,
                "project": export.project,
                "exported_at": export.exported_at.isoformat(),
            },
        }
    )
    cells = notebook.cells
    cells.append(
        new_markdown_cell(
            f"# {_md_line(export.title)}\n\n{UNSANDBOXED_WARNING}\n\nA Workbench session of the "
            f"project *{_md_line(export.project)}*, exported {_when(export.exported_at)}. "
            "Run the cells in order next to the project's files: "
            + (", ".join(f"`{f.name}`" for f in export.files) or "(no files)")
            + "."
        )
    )
    setup = SETUP.format(
        title=export.title,
        project=export.project,
        exported=_when(export.exported_at),
        server_url=export.server_url,
        files=repr({f.name: f.id for f in export.files}),
        answers=repr([a for r in export.runs for a in r.answers]),
    )
    count = 1
    cells.append(new_code_cell(setup, execution_count=count))
    for run in export.runs:
        cells.append(new_markdown_cell(_question_md(run)))
        for plan in run.plans:
            cells.append(
                new_markdown_cell(
                    f"**Plan** (before step {plan.get('step')})\n\n"
                    + _inert_md(str(plan.get("text", "")))
                )
            )
        for step in run.steps:
            if step.thought:
                cells.append(new_markdown_cell(f"*{_md_line(step.thought)}*"))
            if step.runnable:
                count += 1
                cells.append(
                    new_code_cell(
                        step.code or "",
                        execution_count=count,
                        outputs=_outputs(step, count),
                        metadata={"workbench": {"run": run.number, "step": step.index}},
                    )
                )
            elif step.code or step.error:
                cells.append(new_markdown_cell(_skipped_md(step)))
            if step.question:
                cells.append(
                    new_markdown_cell(
                        f"The agent asked: **{_md_line(step.question[0])}**  \n"
                        f"The answer: {_md_line(step.question[1])}"
                    )
                )
        cells.append(new_markdown_cell(_outcome_md(run)))
    nbformat.validate(notebook)
    return nbformat.writes(notebook).encode()


def _outputs(step: ExportStep, count: int) -> list[Any]:
    outputs: list[Any] = []
    if step.output:
        text = step.output if step.output.endswith("\n") else step.output + "\n"
        outputs.append(new_output("stream", name="stdout", text=text))
    for artifact in step.artifacts:
        data = _mime_bundle(artifact)
        if data:
            outputs.append(new_output("display_data", data=data, metadata={}))
    return outputs


def _mime_bundle(artifact: ExportArtifact) -> dict[str, Any]:
    if (figure := artifact.figure()) is not None:
        return {"application/vnd.plotly.v1+json": figure, "text/plain": f"<{artifact.name}>"}
    if artifact.kind == "image" and artifact.data is not None:
        if artifact.mime == "image/svg+xml":
            return {
                "image/svg+xml": artifact.data.decode("utf-8", "replace"),
                "text/plain": f"<{artifact.name}>",
            }
        return {
            artifact.mime
            if artifact.mime in ("image/png", "image/jpeg")
            else "image/png": base64.b64encode(artifact.data).decode(),
            "text/plain": f"<{artifact.name}>",
        }
    if (table := artifact.table()) is not None:
        return {"text/html": table_html(table), "text/plain": markdown_table(table)}
    if artifact.kind == "table":  # a table's full data is also offered as a CSV file
        return {}
    where = "" if artifact.data is not None else f" (in the workbench: {artifact.url})"
    return {"text/plain": f"{artifact.kind} {artifact.name}{where}"}


def _question_md(run: ExportRun) -> str:
    return f"## {run.number}. {_md_line(run.query)}\n\n*{run.model} · {_when(run.created_at)}*"


def _skipped_md(step: ExportStep) -> str:
    why = "rejected by the user" if (step.decision or {}).get("decision") == "reject" else "failed"
    parts = [f"Step {step.index} {why}, so it is not part of the notebook's code:"]
    if step.code:
        parts.append(_fence(step.code, "python"))
    if step.error:
        parts.append(_fence(step.error, "text"))
    return "\n\n".join(parts)


def _outcome_md(run: ExportRun) -> str:
    if run.final_answer is not None:
        text = f"**Answer**\n\n{_inert_md(run.final_answer)}"
    elif run.status == "cancelled":
        text = "*This question was stopped before it had an answer.*"
    elif run.status in ("succeeded", "failed") or run.error:
        text = f"**The run failed:** {_md_line(run.error or 'no answer')}"
    else:
        text = f"*Not finished when exported ({run.status}).*"
    for check in run.verifications:
        text += f"\n\n*Check: {check.get('verdict')} — {_md_line(str(check.get('reason', '')))}*"
    return text


# -- Markdown ----------------------------------------------------------------------------


def to_markdown(export: SessionExport) -> bytes:
    lines = [
        f"# {_md_line(export.title)}",
        "",
        f"Project *{_md_line(export.project)}* · exported {_when(export.exported_at)} · files: "
        + (", ".join(f"`{f.name}`" for f in export.files) or "none"),
    ]
    for run in export.runs:
        lines += ["", _question_md(run)]
        for plan in run.plans:
            lines += ["", f"> **Plan** (before step {plan.get('step')})", ">"]
            lines += [f"> {line}" for line in _inert_md(str(plan.get("text", ""))).splitlines()]
        for step in run.steps:
            lines += ["", f"### Step {step.index}"]
            if step.thought:
                lines += ["", f"*{_md_line(step.thought)}*"]
            if step.runnable:
                lines += ["", _fence(step.code or "", "python")]
            elif step.code or step.error:
                lines += ["", _skipped_md(step)]
            if step.output:
                lines += ["", _fence(step.output, "text")]
            for artifact in step.artifacts:
                if shown := _artifact_md(artifact):
                    lines += ["", shown]
            if step.question:
                lines += [
                    "",
                    f"The agent asked: **{_md_line(step.question[0])}**  ",
                    f"The answer: {_md_line(step.question[1])}",
                ]
        lines += ["", _outcome_md(run)]
    return ("\n".join(lines) + "\n").encode()


def _artifact_md(artifact: ExportArtifact) -> str:
    label = _md_line(artifact.name)
    if (table := artifact.table()) is not None:
        return markdown_table(table, MARKDOWN_TABLE_ROWS)
    if artifact.kind == "table":
        return ""
    if artifact.kind == "image" and artifact.data is not None and artifact.mime == "image/png":
        return f"![{label}](data:image/png;base64,{base64.b64encode(artifact.data).decode()})"
    if artifact.kind == "plotly":
        return f"*Interactive chart {label}: see the HTML report or the notebook.*"
    return f"*{artifact.kind.capitalize()} {label}* ({_size(artifact.size)})"


def markdown_table(table: dict[str, Any], limit: int = MARKDOWN_TABLE_ROWS) -> str:
    columns = [str(c) for c in table.get("columns", [])]
    rows = table.get("rows", [])[:limit]

    def cell(value: Any) -> str:
        text = "" if value is None else _inert_md(str(value))
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(cell(c) for c in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    total = int(table.get("row_count", len(rows)))
    if total > len(rows):
        lines.append(f"\n*{len(rows):,} of {total:,} rows*")
    return "\n".join(lines)


def table_html(table: dict[str, Any], limit: int = TABLE_ROWS) -> str:
    return str(_templates().get_template("table.html.j2").render(table=table, limit=limit))


def _fence(text: str, language: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _inert_md(text: str) -> str:
    """Markdown from the model (or from data it read) that fetches nothing when shown.

    Jupyter and most Markdown viewers load images as soon as a document opens, so a
    `![x](https://…?data)` or an `<img src=…>` would send data to any server. Every image
    becomes plain text and a link (`!` as an entity: nothing starts an image), and every
    raw HTML tag shows as text; the rest of the Markdown renders as written.
    """
    text = text.replace("![", "&#33;[")
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def _md_line(text: str) -> str:
    """Text from the model or the user on one Markdown line, with nothing that acts as
    Markdown structure or raw HTML."""
    flat = " ".join(text.split())
    return re.sub(r"([\\`*_{}\[\]<>#|])", r"\\\1", flat)


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


# -- the report --------------------------------------------------------------------------


def to_html(export: SessionExport) -> bytes:
    nonce = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    page = (
        _templates()
        .get_template("report.html.j2")
        .render(
            export=export,
            nonce=nonce,
            plotly_js=Markup(_plotly_js()) if export.has_charts else None,
            when=_when,
            size=_size,
            markdown=_markdown,
            table_html=lambda t: Markup(table_html(t)),
            script_json=_script_json,
            b64=lambda data: base64.b64encode(data).decode(),
            chart_title=chart_title,
        )
    )
    return page.encode()


def chart_title(figure: dict[str, Any]) -> str | None:
    title = (figure.get("layout") or {}).get("title")
    text = title.get("text") if isinstance(title, dict) else title
    return str(text) if text else None


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

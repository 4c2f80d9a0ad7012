"""The notebook renderer: a session as a Jupyter notebook that reruns top to bottom in a
plain kernel next to the files the session read, and gives the same answers.

Its first cell refuses to run unsandboxed unless told to, defines what the sandbox gave the
code (`final_answer`, `ask_user` replaying the answers given, `display`, and `sql()` on
the reader's own connection when the session queried data sources), then checks the files
are there at the version the session read (or fetches them with a token). Each step
is a code cell with its recorded outputs; of a step that failed, the cell runs what ran in
the workbench before the error (replay.py) and keeps the rest as comments; code that never
ran (rejected, refused, unparsable) is shown in Markdown. So "Run all" goes through.
"""

from __future__ import annotations

import base64
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from app.sessions.export.gather import ExportArtifact, ExportStep, SessionExport
from app.sessions.export.markdown_text import (
    inert_md,
    markdown_table,
    md_line,
    outcome_md,
    queries_md,
    question_md,
    revision_md,
    skipped_md,
    when,
)
from app.sessions.export.replay import replay
from app.sessions.export.report import table_html

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

# What the sandbox gave the agent's code besides Python: final_answer, ask_user and display.
from IPython.display import Markdown, display


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


# The analysis reads these files by name from the working directory: the ones the session's
# code read, as it read them. Keep them next to this notebook (`workbench export SESSION
# --with-files` downloads them), or set WORKBENCH_TOKEN (an API token) and this cell fetches
# the missing ones from the workbench.
import hashlib
import shutil
import urllib.request
from pathlib import Path

WORKBENCH_URL = os.environ.get("WORKBENCH_URL", {server_url!r})
SESSION_FILES = {files}  # name: (file id, version, SHA-256) in the workbench

_missing = [_name for _name in SESSION_FILES if not Path(_name).is_file()]
if _missing and not os.environ.get("WORKBENCH_TOKEN"):
    raise FileNotFoundError(
        f"Not next to this notebook: {{', '.join(_missing)}}. Put them there, or set "
        "WORKBENCH_TOKEN to fetch them from the workbench."
    )
for _name in _missing:
    _file_id, _version, _sha256 = SESSION_FILES[_name]
    _path = f"/versions/{{_version}}/content" if _version else "/content"
    _request = urllib.request.Request(
        f"{{WORKBENCH_URL}}/api/v1/files/{{_file_id}}{{_path}}",
        headers={{"Authorization": f"Bearer {{os.environ['WORKBENCH_TOKEN']}}"}},
    )
    with urllib.request.urlopen(_request) as _response, open(_name, "wb") as _out:
        shutil.copyfileobj(_response, _out)
    print(f"fetched {{_name}}")
for _name, (_file_id, _version, _sha256) in SESSION_FILES.items():
    _digest = hashlib.sha256()
    with open(_name, "rb") as _in:
        for _chunk in iter(lambda: _in.read(1 << 20), b""):
            _digest.update(_chunk)
    if _sha256 and _digest.hexdigest() != _sha256:
        print(f"Note: {{_name}} is not the version the session read; results may differ.")
'''


# Defined when the session queried data sources: the same calls, on the reader's own
# connection (the workbench never puts a source's credentials in an export).
SOURCES_SETUP = """

# The session queried these data sources with sql(query, source=...), which the workbench
# ran on its own connections. Here sql() runs the same SQL on YOURS: set an environment
# variable WORKBENCH_SOURCE_<NAME> (the name in capitals) to a SQLAlchemy URL for each, e.g.
# postgresql://me@db.example.com/shop (needs `pip install sqlalchemy pyarrow` and the
# database's driver, such as psycopg2 or pymysql).
SOURCES = {sources}


def _source_engine(source):
    import sqlalchemy

    name = source if source is not None else (SOURCES[0] if len(SOURCES) == 1 else None)
    if name is None:
        raise ValueError(f"say which source: one of {{', '.join(SOURCES)}}")
    variable = "WORKBENCH_SOURCE_" + "".join(c if c.isalnum() else "_" for c in name.upper())
    url = os.environ.get(variable)
    if not url:
        raise RuntimeError(f"Set {{variable}} to a SQLAlchemy URL of the source {{name!r}}.")
    return sqlalchemy.create_engine(url)


def sql(query, source=None, into=None):
    # One query on your own connection: a DataFrame, or with into= the result written to
    # that Parquet file, whose name is returned.
    import pandas as pd

    engine = _source_engine(source)
    try:
        with engine.connect() as connection:
            result = connection.exec_driver_sql(query)
            frame = pd.DataFrame(result.fetchall(), columns=list(result.keys()))
    finally:
        engine.dispose()
    if into is None:
        return frame
    frame.to_parquet(into)
    return into


def tables(source=None):
    import pandas as pd
    import sqlalchemy

    engine = _source_engine(source)
    try:
        return pd.DataFrame({{"name": sqlalchemy.inspect(engine).get_table_names()}})
    finally:
        engine.dispose()


def columns(table, source=None):
    import pandas as pd
    import sqlalchemy

    engine = _source_engine(source)
    try:
        found = sqlalchemy.inspect(engine).get_columns(table.split(".")[-1])
        return pd.DataFrame([{{"name": c["name"], "type": str(c["type"])}} for c in found])
    finally:
        engine.dispose()
"""


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
                # What `workbench export --with-files` downloads next to the notebook.
                "files": [
                    {"id": f.id, "name": f.name, "version": f.version, "sha256": f.sha256}
                    for f in export.files
                ],
            },
        }
    )
    cells = notebook.cells
    cells.append(
        new_markdown_cell(
            f"# {md_line(export.title)}\n\n{UNSANDBOXED_WARNING}\n\nA Workbench session of the "
            f"project *{md_line(export.project)}*, exported {when(export.exported_at)}. "
            + (
                "Run the cells in order next to the files the session read: "
                + ", ".join(f"`{md_line(f.name)}`" for f in export.files)
                + "."
                if export.files
                else "The session read no project files."
            )
        )
    )
    setup = SETUP.format(
        title=export.title,
        project=export.project,
        exported=when(export.exported_at),
        server_url=export.server_url,
        files=repr({f.name: (f.id, f.version, f.sha256) for f in export.files}),
        answers=repr([a for r in export.runs for a in r.answers]),
    )
    queries = [q for run in export.runs for step in run.steps for q in step.queries]
    sources = sorted({str(q.get("source")) for q in queries})
    if sources:
        setup += SOURCES_SETUP.format(sources=repr(sources))
    count = 1
    cells.append(new_code_cell(setup, execution_count=count))
    for run in export.runs:
        cells.append(new_markdown_cell(question_md(run)))
        for plan in run.plans:
            cells.append(
                new_markdown_cell(
                    f"**Plan** (before step {plan.get('step')})\n\n"
                    + inert_md(str(plan.get("text", "")))
                )
            )
        for step in run.steps:
            if step.thought:
                cells.append(new_markdown_cell(f"*{md_line(step.thought)}*"))
            if (cell := replay(step)) is not None:
                count += 1
                cells.append(
                    new_code_cell(
                        cell.source,
                        execution_count=count,
                        outputs=_outputs(step, count),
                        metadata={"workbench": {"run": run.number, "step": step.index}},
                    )
                )
            elif step.code or step.error:
                cells.append(new_markdown_cell(skipped_md(step)))
            if step.queries:
                cells.append(new_markdown_cell(queries_md(step)))
            if step.revision is not None:
                cells.append(new_markdown_cell(revision_md(step)))
            if step.question:
                cells.append(
                    new_markdown_cell(
                        f"The agent asked: **{md_line(step.question[0])}**  \n"
                        f"The answer: {md_line(step.question[1])}"
                    )
                )
        cells.append(new_markdown_cell(outcome_md(run)))
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

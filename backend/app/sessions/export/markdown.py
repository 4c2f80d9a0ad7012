"""The Markdown renderer: a session as one Markdown document, with tables as Markdown,
PNG images inline as data URIs and interactive charts named (they need the report or the
notebook).
"""

from __future__ import annotations

import base64

from app.sessions.export.gather import ExportArtifact, SessionExport
from app.sessions.export.markdown_text import (
    MARKDOWN_TABLE_ROWS,
    fence,
    human_size,
    inert_md,
    markdown_table,
    md_line,
    outcome_md,
    queries_md,
    question_md,
    revision_md,
    when,
)


def to_markdown(export: SessionExport) -> bytes:
    lines = [
        f"# {md_line(export.heading)}",
        "",
        f"Project *{md_line(export.project)}* · exported {when(export.exported_at)} · files read: "
        + (", ".join(f"`{f.name}`" for f in export.files) or "none"),
    ]
    for run in export.runs:
        lines += ["", question_md(run)]
        for plan in run.plans:
            lines += ["", f"> **Plan** (before step {plan.get('step')})", ">"]
            lines += [f"> {line}" for line in inert_md(str(plan.get("text", ""))).splitlines()]
        for step in run.steps:
            lines += ["", f"### Step {step.index}"]
            if step.thought:
                lines += ["", f"*{md_line(step.thought)}*"]
            if step.code:
                lines += ["", fence(step.code, "python")]
            if step.queries:
                lines += ["", queries_md(step)]
            if step.output:
                lines += ["", fence(step.output, "text")]
            for artifact in step.artifacts:
                if shown := _artifact_md(artifact):
                    lines += ["", shown]
            if step.revision is not None:
                lines += ["", revision_md(step)]
            elif step.error:
                lines += ["", fence(step.error, "text")]
            if step.question:
                lines += [
                    "",
                    f"The agent asked: **{md_line(step.question[0])}**  ",
                    f"The answer: {md_line(step.question[1])}",
                ]
        lines += ["", outcome_md(run)]
    return ("\n".join(lines) + "\n").encode()


def _artifact_md(artifact: ExportArtifact) -> str:
    label = md_line(artifact.name)
    if (table := artifact.table()) is not None:
        return markdown_table(table, MARKDOWN_TABLE_ROWS)
    if artifact.kind == "table":
        return ""
    if artifact.kind == "image" and artifact.data is not None and artifact.mime == "image/png":
        return f"![{label}](data:image/png;base64,{base64.b64encode(artifact.data).decode()})"
    if artifact.kind == "plotly":
        return f"*Interactive chart {label}: see the HTML report or the notebook.*"
    return f"*{artifact.kind.capitalize()} {label}* ({human_size(artifact.size)})"

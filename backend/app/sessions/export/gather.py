"""What an export shows, read once: a session's runs, steps and artifacts and the project's
files as plain values (`SessionExport`), holding a database connection only for the rows.

Artifacts are embedded up to a byte budget; a step that tried something the sandbox refused
is left out whole, and a table's CSV twin is dropped for the table itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import release_connection
from app.infra.storage import ObjectNotFound, ObjectStorage
from app.models import Artifact, File, Project, Run, Session
from app.sandbox import REFUSED_PREFIX

# What an export says in place of a step that tried something the sandbox refused.
REFUSED_STEP = "This step tried something the sandbox refuses; it is left out of the export."

# Artifacts are embedded up to this many bytes in all (a chart or image past it is named,
# with where to get it, instead): an export is built in memory, so this bounds its size.
EMBED_LIMIT_BYTES = 48 * 1024 * 1024


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

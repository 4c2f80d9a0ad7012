"""What an export shows, read once: a session's runs (all of them, or those chosen), their
steps and artifacts, and the files they read, as plain values (`SessionExport`), holding a
database connection only for the rows.

Artifacts are embedded up to a byte budget; a step that tried something the sandbox refused
is left out whole, and a table's CSV twin is dropped for the table itself. Files the code
wrote are read only when the export attaches them (the report), each up to a size.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.attempts.numbering import STEP_BASE
from app.branches import lineage
from app.db import release_connection
from app.errors import BadRequest
from app.infra.storage import ObjectNotFound, ObjectStorage
from app.models import Artifact, File, Project, Run, RunStatus, Session
from app.runs.cell_code import cell_heading
from app.sandbox import REFUSED_PREFIX
from app.sessions.export.figures import inert_figure

# What an export says in place of a step that tried something the sandbox refused.
REFUSED_STEP = "This step tried something the sandbox refuses; it is left out of the export."

# Artifacts are embedded up to this many bytes in all (a chart or image past it is named,
# with where to get it, instead): an export is built in memory, so this bounds its size.
EMBED_LIMIT_BYTES = 48 * 1024 * 1024
# Files the code wrote (by_region.csv) travel inside the report up to these sizes: each up
# to 5 MB, 15 MB in all (about 20 MB once base64-encoded), so that the report still goes
# by e-mail. A file past them is named with its size and left in the workbench.
ATTACH_FILE_BYTES = 5 * 1024 * 1024
ATTACH_TOTAL_BYTES = 15 * 1024 * 1024

# Code that lists the working directory may read any file in it.
_LISTS_FILES = re.compile(r"\b(?:listdir|scandir|iterdir|glob|walk)\b")


class UnknownRuns(BadRequest):
    """The export names runs that are not the session's (or no runs at all)."""

    code = "unknown_run"


@dataclass
class ExportArtifact:
    id: str
    kind: str
    name: str
    mime: str
    size: int
    data: bytes | None  # None: too big to embed or attach, or missing from storage

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
        return inert_figure(value) if isinstance(value, dict) else None


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
    # The check of the answer this step gave asked for a revision (the step's "error"):
    # its code ran to the end, and the agent went on.
    revision: str | None = None
    # The queries its code ran on data sources: {source, sql, rows, duration_ms, error}.
    queries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rejected(self) -> bool:
        return (self.decision or {}).get("decision") == "reject"

    @property
    def failed(self) -> bool:
        """Its code ended with an error (not a check's request to revise the answer)."""
        return self.error is not None and self.revision is None


@dataclass
class ExportRun:
    id: str
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
    step_count: int = 0  # steps it took (also those no export shows)
    # The team's knowledge items it was given, in prompt order: [{item_id, title, used}].
    knowledge: list[dict[str, Any]] = field(default_factory=list)
    # A cell of the user's own: it has output, never an answer (so none is missed).
    is_cell: bool = False
    # A question asked with several attempts: the verdict in words ("3 of 3 attempts
    # agree."); its steps are the chosen attempt's.
    verdict: str | None = None

    @property
    def stopped(self) -> bool:
        return self.status == RunStatus.cancelled

    @property
    def answer_check(self) -> dict[str, Any] | None:
        """The check of the answer shown (stored checks carry no `final` flag: the last check
        of a succeeded run is about its answer; the others sent the agent back to work)."""
        if self.status != RunStatus.succeeded or not self.verifications:
            return None
        return self.verifications[-1]


@dataclass
class ExportFile:
    """A project file the exported runs read: the version they read."""

    id: str
    name: str
    version: int | None
    sha256: str | None


@dataclass
class SessionExport:
    session_id: str
    title: str
    project: str
    files: list[ExportFile]  # those the exported runs read or were pinned to
    runs: list[ExportRun]
    exported_at: datetime
    server_url: str
    chosen: bool = False  # the runs were chosen (else: the format's default)
    run_total: int = 0  # the session's runs, chosen or not

    @property
    def heading(self) -> str:
        """The report's heading: the session's title, unless that is one of the questions
        below (a session is named after its first question), which would then read twice;
        the project's name heads it instead."""
        shown = {" ".join(run.query.split()) for run in self.runs}
        if " ".join(self.title.split()) in shown:
            return self.project or "Workbench report"
        return self.title

    @property
    def has_charts(self) -> bool:
        return any(a.figure() is not None for r in self.runs for s in r.steps for a in s.artifacts)


async def gather(
    db: AsyncSession,
    storage: ObjectStorage,
    session: Session,
    server_url: str,
    *,
    run_ids: Sequence[uuid.UUID] | None = None,
    succeeded_only: bool = False,
    attach_files: bool = False,
) -> SessionExport:
    """Everything the export shows. The connection goes back before artifacts are read.

    Args:
        db: The request's database session.
        storage: Where artifacts are.
        session: The session to export.
        server_url: Where the notebook fetches files from.
        run_ids: Only these runs (in the session's order); None: see `succeeded_only`.
        succeeded_only: Without `run_ids`, only the runs that succeeded (all runs when none
            did, so that an export is never empty of what happened).
        attach_files: Read the files the code wrote, to attach them (up to their limits).

    Raises:
        UnknownRuns: `run_ids` names a run that is not the session's.
    """
    project = await db.get(Project, session.project_id)
    # A branch's export begins with its past (the notebook reruns from the start).
    chain = await lineage.segments(db, session)
    every = list(
        await db.scalars(
            select(Run)
            .where(lineage.history_clause(session, chain))
            .order_by(Run.created_at, Run.id)
        )
    )
    project_files = list(
        await db.scalars(
            select(File).where(File.project_id == session.project_id).order_by(File.name)
        )
    )
    await release_connection(db)
    runs = _choose(every, run_ids, succeeded_only)

    budget = EMBED_LIMIT_BYTES
    attach_budget = ATTACH_TOTAL_BYTES
    exported_runs = []
    for number, run in enumerate(runs, start=1):
        by_step: dict[int, list[Artifact]] = {}
        for artifact in run.artifacts:
            if artifact.step < STEP_BASE:  # (the other attempts' are numbered past it)
                by_step.setdefault(artifact.step, []).append(artifact)
        chosen = (run.verdict or {}).get("chosen")
        steps = [
            _export_step(s.index, s.thought, s.code, s.output, s.error, s.queries)
            for s in run.steps
            if s.attempt is None or s.attempt == chosen
        ] or [ExportStep(1, None, None, None, None)]
        written: list[tuple[ExportArtifact, str]] = []  # files the code wrote, read last
        for index, artifacts in sorted(by_step.items()):
            step = next((s for s in steps if s.index == index), steps[-1])
            # A table shown with display() also came as a CSV of all its rows: the table
            # is what the export shows (a rerun makes it again).
            tables = {Path(a.name).stem for a in artifacts if a.kind == "table"}
            for artifact in artifacts:
                if artifact.kind == "file" and Path(artifact.name).stem in tables:
                    continue
                data = None
                if artifact.kind != "file" and artifact.size <= budget:
                    data = await _read(storage, artifact.storage_key)
                    budget -= len(data or b"")
                exported = ExportArtifact(
                    str(artifact.id),
                    artifact.kind,
                    artifact.name,
                    artifact.mime,
                    artifact.size,
                    data,
                )
                step.artifacts.append(exported)
                if artifact.kind == "file":
                    written.append((exported, artifact.storage_key))
        # Attached up to their limits, the files the answer names first.
        answer = run.final_answer or ""
        for file, key in sorted(written, key=lambda w: Path(w[0].name).name not in answer):
            if attach_files and file.size <= min(ATTACH_FILE_BYTES, attach_budget, budget):
                file.data = await _read(storage, key)
                attach_budget -= len(file.data or b"")
                budget -= len(file.data or b"")
        for asked in run.inputs or []:
            if (asking := _step(steps, asked.get("step"))) is not None:
                asking.question = (str(asked.get("question", "")), str(asked.get("answer", "")))
        for decision in run.approvals or []:
            if (decided := _step(steps, decision.get("step"))) is not None:
                decided.decision = dict(decision)
        checks = [c for c in run.verifications or [] if c.get("attempt") in (None, chosen)]
        final_check = checks[-1] if checks and run.status == RunStatus.succeeded else None
        for check in checks:
            revised = _step(steps, check.get("step"))
            if check is not final_check and check.get("verdict") == "revise" and revised:
                revised.revision = str(check.get("reason") or "")
        exported_runs.append(
            ExportRun(
                id=str(run.id),
                number=number,
                # A cell is headed by what it was (its code is its one step's).
                query=cell_heading(run.cell) if run.cell else run.query,
                model=run.model or "no model",
                status=run.status,
                final_answer=run.final_answer,
                error=run.error,
                created_at=run.created_at,
                tokens_in=run.tokens_in,
                tokens_out=run.tokens_out,
                cost_usd=run.cost_usd,
                steps=[s for s in steps if s.code or s.output or s.error or s.artifacts],
                plans=[p for p in run.plans or [] if p.get("attempt") in (None, chosen)],
                verifications=checks,
                answers=[str(i.get("answer", "")) for i in run.inputs or []],
                step_count=len([s for s in run.steps if s.attempt in (None, chosen)]),
                knowledge=list(run.knowledge or []),
                is_cell=run.cell is not None,
                verdict=str(run.verdict["reason"]) if run.verdict else None,
            )
        )
    return SessionExport(
        session_id=str(session.id),
        title=whole_title(session.title, every[0].query if every else None),
        project=project.name if project else "",
        files=files_read(runs, project_files),
        runs=exported_runs,
        exported_at=datetime.now(UTC),
        server_url=server_url.rstrip("/"),
        chosen=run_ids is not None,
        run_total=len(every),
    )


def whole_title(title: str, first_query: str | None) -> str:
    """The session's title, or the first question whole when the title is that question cut
    short with "…" (as the browser names a new session)."""
    cut = title.removesuffix("…").rstrip()
    if title.endswith("…") and first_query and cut and first_query.startswith(cut):
        return " ".join(first_query.split())
    return title


def _choose(
    runs: list[Run], run_ids: Sequence[uuid.UUID] | None, succeeded_only: bool
) -> list[Run]:
    if run_ids is not None:
        wanted = set(run_ids)
        unknown = sorted(str(i) for i in wanted - {r.id for r in runs})
        if unknown:
            raise UnknownRuns(f"These runs are not in this session: {', '.join(unknown)}.")
        if not wanted:
            raise UnknownRuns("Choose at least one run to export.")
        return [r for r in runs if r.id in wanted]
    if succeeded_only:
        succeeded = [r for r in runs if r.status == RunStatus.succeeded]
        return succeeded or runs
    return runs


def files_read(runs: list[Run], project_files: list[File]) -> list[ExportFile]:
    """The project files the runs read or were pinned to, at the version they had (the
    latest run's, for a file several runs read).

    A file counts as read when a step's code names it (or lists the folder, which may read
    any file); the sandbox does not record which files code opened. Runs from before
    versions were recorded had the project's files as they are now.
    """
    current = [
        {"file_id": str(f.id), "name": f.name, "version": f.version, "sha256": f.sha256}
        for f in project_files
    ]
    used: dict[str, ExportFile] = {}
    for run in runs:
        code = "\n".join(
            s.code for s in run.steps if s.code and not (s.error or "").startswith(REFUSED_PREFIX)
        )
        lists = bool(_LISTS_FILES.search(code))
        for seen in run.files or current:
            name = str(seen.get("name", ""))
            mentioned = re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", code)
            if name and (lists or mentioned or str(seen.get("file_id")) in run.file_ids):
                version = seen.get("version")
                used[name] = ExportFile(
                    str(seen.get("file_id")),
                    name,
                    int(version) if isinstance(version, int) else None,
                    str(seen["sha256"]) if seen.get("sha256") else None,
                )
    return [used[name] for name in sorted(used)]


def _export_step(
    index: int,
    thought: str | None,
    code: str | None,
    output: str | None,
    error: str | None,
    queries: list[dict[str, Any]] | None,
) -> ExportStep:
    """A step as exports show it: one that tried something the sandbox refused is left out
    whole (its code must not run anywhere, least of all outside the sandbox)."""
    if error is not None and error.startswith(REFUSED_PREFIX):
        return ExportStep(index, None, None, None, REFUSED_STEP)
    return ExportStep(index, thought, code, output, error, queries=list(queries or []))


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

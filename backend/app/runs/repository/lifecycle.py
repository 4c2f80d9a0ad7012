"""The statements running a question makes on runs, their steps, artifacts and events.

Each method is one unit of work with a database session of its own (from the factory it
was made with): a run belongs to no request, and holds no connection while it waits.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import delete, func, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app import audit
from app.audit import Action
from app.branches import lineage, pins
from app.infra.events import RunEvent
from app.models import (
    Artifact,
    File,
    Project,
    Run,
    RunEventRow,
    RunFileRead,
    RunKind,
    RunStatus,
    RunStep,
    Session,
)
from app.models.base import UTCDateTime, utcnow
from app.runs.budget import Usage
from app.runs.cell_code import history_turn
from app.runs.repository import usage
from app.runs.repository.endings import ROW_ONLY, RunEndings, update_run
from app.runs.state import WAITING

HISTORY_TURNS = 10

# Told of each run recorded, once its row is committed: (session, run, (asker id, email), query).
# Told of each run recorded: its session, its id, who asked, the question (or cell's code) and
# the run's kind ("question" or "cell").
RunCreated = Callable[
    [uuid.UUID, uuid.UUID, tuple[uuid.UUID, str], str, Literal["question", "cell"]],
    Awaitable[None],
]


class RunRepository(RunEndings):
    """The statements running a question makes (see module); a run's end's are
    RunEndings' (endings.py)."""

    def __init__(
        self, factory: async_sessionmaker[AsyncSession], run_created: RunCreated | None = None
    ):
        self.factory = factory
        self.run_created = run_created

    # Admission -----------------------------------------------------------------------
    async def missing_files(self, project_id: uuid.UUID, file_ids: list[uuid.UUID]) -> list[str]:
        """Those of `file_ids` that are not files of the project."""
        async with self.factory() as db:
            found = set(
                await db.scalars(
                    select(File.id).where(File.project_id == project_id, File.id.in_(file_ids))
                )
            )
        return [str(f) for f in file_ids if f not in found]

    async def waiting_status(self, session_id: uuid.UUID) -> RunStatus | None:
        """The status of the session's run that waits for the user, if one does."""
        async with self.factory() as db:
            return await db.scalar(
                select(Run.status).where(Run.session_id == session_id, Run.status.in_(WAITING))
            )

    async def project_budget(self, project_id: uuid.UUID) -> tuple[Project, Usage]:
        """The project, and what its runs have spent of its budget (see toward_budget)."""
        async with self.factory() as db:
            project = await db.get(Project, project_id)
            assert project is not None
            return project, await usage.toward_budget(db, project)

    async def add_run(self, run: Run, project_id: uuid.UUID, asker: tuple[uuid.UUID, str]) -> None:
        """Record a new question (and, in the project's audit log, that `asker`, whose id
        and email the request knows, asked it)."""
        async with self.factory() as db:
            db.add(run)
            await db.flush()
            asked = {
                "run_id": str(run.id),
                "session_id": str(run.session_id),
                "model": run.model,
                "query": audit.query_detail(run.query),
            }
            await audit.record(db, project_id, asker, Action.run_asked, ("run", run.id), asked)
            await db.commit()
        # Every run's row is made here (questions and cells alike): so each is announced.
        if self.run_created is not None:
            await self.run_created(
                run.session_id,
                run.id,
                asker,
                run.query,
                "cell" if run.kind == RunKind.cell else "question",
            )

    async def take_reply(
        self,
        run_id: uuid.UUID,
        waiting: RunStatus,
        note: Callable[[dict[str, Any]], dict[str, Any]],
        by: uuid.UUID | None = None,
    ) -> tuple[Run, uuid.UUID, list[dict[str, Any]], dict[str, Any]] | None:
        """Take the reply to a run that waits (`waiting`): only one reply is taken, whichever
        replica it reaches first. The run is queued again, with `note(pending)` (of what it
        waited for) recorded among its inputs (or approvals), and what it waited for cleared;
        the project's audit log says that `by` answered (or decided).

        Returns:
            None if it does not wait so; else the run, its project's owner, the agent's
            memory and what it waited for.
        """
        async with self.factory() as db:
            taken = await db.execute(
                update(Run)
                .where(Run.id == run_id, Run.status == waiting)
                .values(status=RunStatus.queued, waiting_since=None)
            )
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                return None
            run = await db.get(Run, run_id, options=ROW_ONLY, populate_existing=True)
            assert run is not None and run.pending is not None
            owner = run.user_id or await db.scalar(
                select(Project.owner_id)
                .join(Session, Session.project_id == Project.id)
                .where(Session.id == run.session_id)
            )
            pending, memory = dict(run.pending), list(run.agent_memory or [])
            noted = note(pending)
            about: dict[str, Any] = {"run_id": str(run.id), "step": noted.get("step")}
            if waiting == RunStatus.waiting_input:
                run.inputs = [*run.inputs, noted]
                action = Action.input_answered
            else:
                run.approvals = [*run.approvals, noted]
                action, about["decision"] = Action.review_decided, noted.get("decision")
            run.pending, run.agent_memory = None, None
            project_id = await db.scalar(
                select(Session.project_id).where(Session.id == run.session_id)
            )
            if project_id is not None:
                await audit.record(db, project_id, by, action, ("run", run.id), about)
            await db.commit()
        return run, owner or run.session_id, memory, pending

    async def get_run(self, run_id: uuid.UUID) -> Run | None:
        async with self.factory() as db:
            return await db.get(Run, run_id, options=ROW_ONLY)

    async def status(self, run_id: uuid.UUID) -> RunStatus | None:
        async with self.factory() as db:
            return await db.scalar(select(Run.status).where(Run.id == run_id))

    async def mark_running(self, run_id: uuid.UUID) -> None:
        async with self.factory() as db:
            await db.execute(
                update_run(run_id).values(
                    status=RunStatus.running,
                    started_at=func.coalesce(Run.started_at, literal(utcnow(), UTCDateTime)),
                )
            )
            await db.commit()

    # A run's context -----------------------------------------------------------------
    async def context(
        self, run: Run
    ) -> tuple[Session, list[File], list[tuple[str, str]], Project, Usage]:
        """What a run starts from: its session, the project's files, the session's earlier
        answered questions and cells (oldest first; a branch's past among them), the
        project and what it has spent."""
        async with self.factory() as db:
            session, project = (
                await db.execute(
                    select(Session, Project)
                    .join(Project, Project.id == Session.project_id)
                    .where(Session.id == run.session_id)
                )
            ).one()
            files = list(
                await db.scalars(
                    select(File).where(File.project_id == session.project_id).order_by(File.name)
                )
            )
            # A branch reads the versions its past read (app.branches.pins).
            files = await pins.apply(db, session.id, files)
            # A branch's past counts as if its questions had been asked in it.
            chain = await lineage.segments(db, session)
            turns = (
                await db.execute(
                    select(Run.query, Run.final_answer, Run.cell)
                    .where(
                        lineage.history_clause(session, chain),
                        Run.id != run.id,
                        Run.status == RunStatus.succeeded,
                    )
                    .order_by(Run.created_at.desc())
                    .limit(HISTORY_TURNS)
                )
            ).all()
            # Other sessions of the project may have spent while this run was queued.
            used = await usage.toward_budget(db, project)
        history = [history_turn(q, a, cell) for q, a, cell in reversed(turns)]
        return session, files, history, project, used

    async def pin_files(self, run: Run, files: list[File]) -> None:
        """Record which version of each file the run's workspace has (the run view tells
        when a file changed since)."""
        run.files = [
            {"file_id": str(f.id), "name": f.name, "version": f.version, "sha256": f.sha256}
            for f in files
        ]
        async with self.factory() as db:
            await db.execute(update_run(run.id).values(files=run.files))
            await db.commit()

    async def record_reads(self, run: Run, names: Iterable[str]) -> None:
        """Record that the run's code read these files (at the version its workspace had).

        The names come from the sandbox worker, which is not trusted: only the run's own
        files (`run.files`, pinned by `pin_files`) are kept, each once, so the rows stay
        as few as the project's files whatever the worker says.
        """
        wanted = set(names)
        pinned = {
            str(f["name"]): f
            for f in run.files
            if isinstance(f, dict) and f.get("name") in wanted and isinstance(f.get("version"), int)
        }
        if not pinned:
            return
        rows = [
            {"run_id": run.id, "file_id": uuid.UUID(str(f["file_id"])), "version": f["version"]}
            for f in pinned.values()
        ]
        async with self.factory() as db:
            # One statement; a file recorded already (a run that went on after a reply
            # read it again) is left as it is.
            dialect = postgresql if db.get_bind().dialect.name == "postgresql" else sqlite
            await db.execute(dialect.insert(RunFileRead).values(rows).on_conflict_do_nothing())
            await db.commit()

    async def keep_previews(self, files: list[File]) -> None:
        async with self.factory() as db:
            for file in files:
                await db.execute(
                    update(File)
                    # Not over a newer version's (a branch reads an older one).
                    .where(File.id == file.id, File.sha256 == file.sha256)
                    .values(preview=file.preview, row_count=file.row_count)
                )
            await db.commit()

    async def artifact_bytes(self, session_id: uuid.UUID) -> int:
        """What the session keeps of charts, tables and files, in bytes."""
        async with self.factory() as db:
            kept = await db.scalar(
                select(func.coalesce(func.sum(Artifact.size), 0)).where(
                    Artifact.session_id == session_id
                )
            )
        return int(kept or 0)

    async def set_snapshot(self, session_id: uuid.UUID, record: dict[str, Any]) -> bool:
        """Record the session's new snapshot; whether the session still exists."""
        async with self.factory() as db:
            changed = await db.execute(
                update(Session)
                .where(Session.id == session_id)
                .values(snapshot=record, updated_at=utcnow())
            )
            await db.commit()
        return bool(getattr(changed, "rowcount", 0))

    async def set_cell(self, run_id: uuid.UUID, cell: dict[str, Any]) -> None:
        """Record what a cell's run was and printed (the agent's history reads it)."""
        async with self.factory() as db:
            await db.execute(update_run(run_id).values(cell=cell))
            await db.commit()

    # What a run makes ------------------------------------------------------------------
    async def add_artifact(self, row: Artifact) -> Artifact:
        async with self.factory() as db:
            db.add(row)
            await db.commit()
            return row

    async def add_step(
        self, step: RunStep, totals: dict[str, Any], *, replacing: bool = False
    ) -> None:
        """Record a step, with the run's totals. `replacing`: the step ran again after the
        run waited (it asked the user), and replaces what was kept of it when it asked (the
        queries that part ran are kept)."""
        async with self.factory() as db:
            if replacing:
                earlier = await db.scalar(
                    select(RunStep.queries).where(
                        RunStep.run_id == step.run_id, RunStep.index == step.index
                    )
                )
                step.queries = [*(earlier or []), *(step.queries or [])]
                await db.execute(
                    delete(RunStep).where(
                        RunStep.run_id == step.run_id, RunStep.index == step.index
                    )
                )
            db.add(step)
            await db.execute(update_run(step.run_id).values(**totals))
            await db.commit()

    async def add_note(
        self,
        run_id: uuid.UUID,
        totals: dict[str, Any],
        plan: dict[str, Any] | None = None,
        verification: dict[str, Any] | None = None,
    ) -> None:
        """Store a plan or an answer check with the run, and the run's totals with it."""
        async with self.factory() as db:
            row = await db.get(Run, run_id, options=ROW_ONLY)
            if row is not None:
                if plan is not None:
                    row.plans = [*row.plans, plan]
                if verification is not None:
                    row.verifications = [*row.verifications, verification]
                for column, value in totals.items():
                    setattr(row, column, value)
            await db.commit()

    async def add_events(self, run_id: uuid.UUID, batch: list[tuple[RunEvent, datetime]]) -> None:
        async with self.factory() as db:
            db.add_all(
                RunEventRow(run_id=run_id, seq=e.seq, event=e.event, data=e.data, created_at=at)
                for e, at in batch
            )
            await db.commit()

    async def stored_events(self, run_id: uuid.UUID, after: int) -> list[RunEvent]:
        """The run's stored events after `after`, in order."""
        async with self.factory() as db:
            rows = await db.scalars(
                select(RunEventRow)
                .where(RunEventRow.run_id == run_id, RunEventRow.seq > after)
                .order_by(RunEventRow.seq)
            )
            return [RunEvent(row.seq, row.event, row.data) for row in rows]

    async def last_seq(self, run_id: uuid.UUID) -> int:
        async with self.factory() as db:
            last = await db.scalar(
                select(func.max(RunEventRow.seq)).where(RunEventRow.run_id == run_id)
            )
        return last or 0

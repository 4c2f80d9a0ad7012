"""What the agent of a run is told and works in: the session's workspace (files and
earlier variables) with a sandbox worker on it, and the system prompt that describes them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.agent import prompting
from app.agent.sources_prompt import SourceColumn, SourceInfo, SourceTable
from app.branches import restore, versions
from app.config import Settings
from app.files import service as files_service
from app.files.preview import PreviewError, preview_kind
from app.files.preview.footprint import too_big_for_pandas
from app.infra.storage import ObjectStorage
from app.knowledge import prompt as knowledge_prompt
from app.knowledge import usage as knowledge_usage
from app.knowledge.prompt import Given
from app.knowledge.selection import Selection, selector
from app.models import File, Run, RunKind, Session
from app.observability import tracing
from app.runs import budget, run_states, snapshots, state_fork, state_retention
from app.runs.data_sources import SourcesAnswerer
from app.runs.events import SandboxStarting, StateNotSaved, StateRestored
from app.runs.recorder import EventRecorder
from app.runs.repository import RunRepository, usage
from app.runs.sandboxes import SandboxPool, SlotTicket
from app.runs.snapshot_chunks import ChunkWriter, is_chunked
from app.runs.workspace import (
    manifest_path,
    materialize,
    snapshot_marker_path,
    workspace_dir,
)
from app.sandbox import (
    DEFAULT_AUTHORIZED_IMPORTS,
    RestoreReport,
    SandboxWorker,
    SnapshotReport,
    hostfs,
)
from app.sources import service as sources_service
from app.sources.catalog import SourceCatalog

log = logging.getLogger(__name__)
# What the upload's check of a file says when its preview failed (app.files.previewing.check).
_NOT_PREVIEWABLE = ("too_large", "unreadable")


@dataclass
class AgentContext:
    worker: SandboxWorker
    workspace: Path
    prompt: str
    left: budget.Remaining  # of the project's budget
    review: bool  # the session's code waits for approval
    snapshot: dict[str, Any] | None  # the session's variables the worker started from
    answerer: SourcesAnswerer | None = None  # the project's data sources (sql()), if any
    knowledge: list[Given] = field(default_factory=list)  # the team's items it was given
    # Only repairs wait for approval: a retry after an error, a repair fan-out's winner.
    review_repairs: bool = False


@dataclass
class ContextBuilder:
    settings: Settings
    storage: ObjectStorage
    repository: RunRepository
    sandboxes: SandboxPool

    async def prepare(
        self,
        run: Run,
        recorder: EventRecorder,
        ticket: SlotTicket,
        space: uuid.UUID | None = None,
    ) -> AgentContext:
        """The workspace with the project's files and the session's variables, a worker on
        it, and the prompt.

        Args:
            space: The folder (and worker) to work in instead of the session's: one
                attempt's of a question asked with several (app.attempts), started from the
                session's state (its snapshot restored there; no code asks the user).

        Raises:
            BudgetExceeded: The project's budget was spent meanwhile (say, while it queued).
        """
        session, files, turns, project, used = await self.repository.context(run)
        left = budget.remaining(project, used)
        await self.repository.pin_files(run, files)
        # No connection is held while files download and previews are computed.
        data_dir = self.settings.DATA_DIR
        folder = space or session.id
        workspace = workspace_dir(data_dir, folder)
        # In a bubblewrap sandbox the files are bound read-only, never copied and never
        # charged to the workspace's quota; without one they are copied, and given.
        shared = (await self.sandboxes.status()).mechanism == "bubblewrap"
        copies = self.settings.previews_cache if shared else None
        manifest = manifest_path(data_dir, folder)
        await materialize(self.storage, workspace, manifest, files, shared=copies)
        snapshot = session.snapshot
        try:
            marker = snapshot_marker_path(data_dir, folder)
            if not space or not await asyncio.to_thread(
                state_fork.seed_space, data_dir, session.id, space, snapshot
            ):
                await snapshots.download(
                    self.storage, workspace, marker, session.id, snapshot, session.project_id
                )
        except Exception:  # the run goes on; the worker restores what the workspace has
            log.exception("could not fetch the snapshot of session %s", session.id)
        async with self.repository.factory() as db:
            catalog = await sources_service.catalog_of(db, project.id)
            connections = (
                await sources_service.connections_of(db, project.id, self.settings)
                if catalog
                else {}
            )
            spent = await usage.queries_run(db, run.id) if catalog else 0
            # A cell's code is run as written: no model reads the team's knowledge.
            selection = (
                Selection()
                if run.kind == RunKind.cell
                else await selector.select(
                    db,
                    project.id,
                    run.query,
                    self.settings.KNOWLEDGE_PROMPT_TOKENS,
                    {f.id for f in files},
                    {f.id for f in files if str(f.id) in run.file_ids},
                )
            )
            given = knowledge_prompt.given(selection)
            if given or run.knowledge:  # (a run going on after the user's reply is given anew)
                await knowledge_usage.record_given(db, run.id, given)
                await db.commit()
        usable = [source for source in catalog if source.name in connections]
        unpreviewed = {f.id for f in files if f.preview is None}
        # A cell's code (a job's run too) is run as written: no model reads the files'
        # descriptions, so no preview of a new file (a child process each) is made for it.
        described = [] if run.kind == RunKind.cell else files
        file_infos = [await self._describe(f, pinned=str(f.id) in run.file_ids) for f in described]
        previewed = [f for f in files if f.id in unpreviewed and f.preview]
        if previewed:  # kept for the next run and the browser
            await self.repository.keep_previews(previewed)
        generation = snapshot["generation"] if snapshot else None
        # A new worker takes a few seconds (more when it restores variables): say so, rather
        # than leave the user looking at "thinking".
        with tracing.span("sandbox", {"workbench.snapshot.restoring": generation is not None}):
            worker, fresh = await self.sandboxes.acquire(
                ticket,
                generation,
                on_start=lambda: recorder.emit(SandboxStarting(restoring=generation is not None)),
                given_bytes=0 if shared else sum(f.size for f in files),
            )
        room = (self.settings.SESSION_ARTIFACTS_MB << 20) - await self.repository.artifact_bytes(
            session.id
        )
        worker.artifact_budget = max(0, room)
        worker.project_files = tuple(f.name for f in files)
        answerer = SourcesAnswerer(connections, catalog, self.settings, spent) if catalog else None
        report = worker.take_restore_report() if fresh else None
        # A branch: its variables as they were where it began (not for an attempt's space).
        if space is None and restore.first_run(session):
            placer = versions.Files(
                files, lambda chosen: materialize(self.storage, workspace, manifest, chosen, copies)
            )
            snapshot, report, fresh = await self._settle_branch(
                session, run, worker, workspace, snapshot, report, answerer, recorder, placer
            )
        prompt = prompting.render_system_prompt(
            files=file_infos,
            history=[prompting.Turn(query, answer or "") for query, answer in turns],
            variables=_variables(snapshot, report, fresh),
            authorized_imports=list(DEFAULT_AUTHORIZED_IMPORTS),
            sources=[_source_info(source) for source in usable],
            knowledge=knowledge_prompt.section(selection, {f.id: f.name for f in files}),
        )
        review = session.autonomy == "review" and space is None
        return AgentContext(
            worker,
            workspace,
            prompt,
            left,
            review,
            snapshot,
            answerer,
            knowledge=given,
            review_repairs=session.autonomy == "review_repairs",
        )

    async def _settle_branch(
        self,
        session: Session,
        run: Run,
        worker: SandboxWorker,
        workspace: Path,
        snapshot: dict[str, Any] | None,
        report: RestoreReport | None,
        answerer: SourcesAnswerer | None,
        recorder: EventRecorder,
        files: versions.Files,
    ) -> tuple[dict[str, Any] | None, RestoreReport | None, bool]:
        """A branch's first run: its snapshot restored, or its past replayed (then saved
        as its snapshot); what the prompt tells of the variables (snapshot, report, fresh)."""
        settled = restore.from_snapshot(report) if snapshot else None
        if settled is None:
            why = (report.error if report else "it could not be fetched") if snapshot else None
            settled = await restore.replay(
                self.repository.factory, session, run, worker, answerer, why, files
            )
            saved = await self.save_snapshot(
                run.id, session.id, worker, workspace, snapshot, recorder
            )
            snapshot, report, fresh = saved or snapshot, None, False
        else:
            fresh = True
        await restore.keep(self.repository.factory, session.id, settled)
        session.restored = settled.record()
        await recorder.emit(StateRestored(source=settled.source, notes=settled.notes))
        return snapshot, report, fresh

    async def save_snapshot(
        self,
        run_id: uuid.UUID,
        session_id: uuid.UUID,
        worker: SandboxWorker,
        workspace: Path,
        previous: dict[str, Any] | None,
        recorder: EventRecorder | None = None,
    ) -> dict[str, Any] | None:
        """Have the worker snapshot the session's variables; keep them as the run's state
        and the session's snapshot (app.runs.run_states) within the bounds (the new
        record; None when nothing new was stored, or the project's bound refused it: then
        `recorder` is told, `state.not_saved`)."""
        taken = await self.snapshot_in_place(worker, workspace, previous)
        if taken is None:
            return None
        report, allowed = taken
        record = await self.keep_state(
            run_id, session_id, workspace, previous, report, allowed, recorder
        )
        if record is not None:
            worker.snapshot_generation = record["generation"]
            marker = snapshot_marker_path(self.settings.DATA_DIR, session_id)
            await asyncio.to_thread(snapshots.remember, marker, record["generation"])
        return record

    async def snapshot_in_place(
        self, worker: SandboxWorker, workspace: Path, previous: dict[str, Any] | None
    ) -> tuple[SnapshotReport, int] | None:
        """Have the worker write its variables' snapshot into its workspace (nothing is
        stored yet): the report and the bytes it was allowed; None when snapshots are off
        or the worker is gone."""
        limit = self.settings.SANDBOX_SNAPSHOT_MB << 20
        if not limit or not worker.alive:
            return None
        # The snapshot counts against the workspace's quota (the project's files copied in
        # are given, not charged: a file bigger than the quota leaves it whole); the one it
        # replaces is freed.
        quota = (self.settings.SANDBOX_DISK_MB << 20) + max(0, worker.given_bytes)
        used = (await asyncio.to_thread(hostfs.usage, workspace)).bytes
        room = quota - used + (int(previous["bytes"]) if previous else 0)
        allowed = max(0, min(limit, room))
        return await asyncio.to_thread(worker.snapshot, allowed), allowed

    async def keep_state(
        self,
        run_id: uuid.UUID,
        session_id: uuid.UUID,
        workspace: Path,
        previous: dict[str, Any] | None,
        report: SnapshotReport,
        allowed: int,
        recorder: EventRecorder | None = None,
    ) -> dict[str, Any] | None:
        """Store a snapshot the worker wrote into `workspace` as the run's state and the
        session's snapshot (app.runs.run_states) within the bounds: the new record (None
        when nothing new was stored, or the project's bound refused it: then `recorder`
        is told, `state.not_saved`)."""
        factory = self.repository.factory
        project_id = await run_states.project_of(factory, session_id)
        if project_id is None:  # deleted meanwhile
            return None
        if not report.changed:  # nothing ran: this run's state is the one the session has
            if is_chunked(previous):
                assert previous is not None
                await self._keep(run_id, session_id, project_id, previous, workspace, None, 0)
            return None
        try:
            record = await self._keep(
                run_id, session_id, project_id, None, workspace, report, allowed
            )
        except state_retention.OverBound as refused:
            await state_retention.refused(factory, project_id, str(refused))
            if recorder is not None:
                await recorder.emit(StateNotSaved(reason=str(refused)))
            return None
        if record is None:
            return None
        if previous and not is_chunked(previous):  # a one-object snapshot from before chunks
            await snapshots.delete(self.storage, session_id, str(previous["generation"]))
        return record

    async def _keep(
        self,
        run_id: uuid.UUID,
        session_id: uuid.UUID,
        project_id: uuid.UUID,
        record: dict[str, Any] | None,
        workspace: Path,
        report: SnapshotReport | None,
        allowed: int,
    ) -> dict[str, Any] | None:
        """Store the report's files (unless `record` is given) and keep the record within
        the bounds. None: the session was deleted meanwhile.

        Raises:
            state_retention.OverBound: The project's bound refused the new record.
        """
        factory = self.repository.factory
        writer = ChunkWriter(self.storage, factory, project_id)
        await writer.load_known()
        gone: set[str] = set()
        for _ in range(3):  # chunks swept meanwhile are stored again
            if report is not None:
                record = await snapshots.upload(
                    self.storage, workspace, report, allowed, writer, force=gone
                )
            assert record is not None
            if writer.new_bytes:  # new chunks: within the project's bound, or refused
                await state_retention.make_room(
                    factory,
                    project_id,
                    session_id,
                    record,
                    self.settings.SNAPSHOT_KEEP_PER_SESSION,
                    self.settings.SNAPSHOT_PROJECT_MAX_MB << 20,
                    writer.new_bytes,
                )
            try:
                kept = await run_states.keep(
                    factory, run_id, session_id, project_id, record, writer.new_bytes
                )
                break
            except run_states.ChunksGone as exc:
                if report is None:
                    return None  # its chunks went: the session's next run stores its own
                gone = exc.digests
        else:
            raise RuntimeError("the snapshot's chunks kept disappearing while it was stored")
        if not kept:
            return None
        # Only this session's own states: the project's are swept apart (app.runs.chunk_sweep).
        await state_retention.at_run_end(
            factory, session_id, self.settings.SNAPSHOT_KEEP_PER_SESSION
        )
        if writer.new_bytes:
            await state_retention.refused(factory, project_id, None)
        return record

    async def _describe(self, file: File, pinned: bool) -> prompting.FileInfo:
        size = prompting.human_size(file.size)
        if preview_kind(file.name) is None:
            return prompting.FileInfo(file.name, size, pinned=pinned)
        if file.preview is None and file.check in _NOT_PREVIEWABLE and file.problem:
            # Its upload's check read it and failed (a child process up to its time limit):
            # not tried again on every question; the file's page may still try.
            return prompting.FileInfo(
                file.name, size, pinned=pinned, note=f"(could not be previewed: {file.problem})"
            )
        try:
            preview = await files_service.preview(self.storage, file, self.settings.previews_cache)
        except PreviewError as exc:
            return prompting.FileInfo(
                file.name, size, pinned=pinned, note=f"(could not be previewed: {exc})"
            )
        return prompting.FileInfo(
            file.name,
            size,
            row_count=preview["row_count"],
            pinned=pinned,
            columns=prompting.columns_from_preview(preview),
            read=prompting.read_hint(preview),
            sheets=list(preview.get("sheets") or []),
            too_big=prompting.too_big(
                too_big_for_pandas(preview, file.size, self.settings.SANDBOX_MEMORY_MB),
                self.settings.SANDBOX_MEMORY_MB,
            ),
        )


def _source_info(source: SourceCatalog) -> SourceInfo:
    """A source as the prompt describes it (made safe and cut to size there)."""
    return SourceInfo(
        name=source.name,
        kind=source.kind,
        description=source.description,
        tables=[
            SourceTable(
                name=f"{table.schema}.{table.name}" if table.schema else table.name,
                row_estimate=table.row_estimate,
                description=table.description,
                columns=[SourceColumn(c.name, c.type, c.description) for c in table.columns],
            )
            for table in source.tables
        ],
        truncated=source.truncated,
    )


def _variables(
    snapshot: dict[str, Any] | None, restored: RestoreReport | None, fresh: bool
) -> prompting.Variables:
    """What the agent is told of the variables earlier questions left (see the prompt)."""
    saved = SnapshotReport.from_record(snapshot) if snapshot else SnapshotReport(changed=False)
    described = {v.name: v.describe() for v in saved.variables if v.kind != "import"}
    if not fresh:  # the same worker: everything is still there, saveable or not
        return prompting.Variables(
            defined=list(described.values()) + [u.describe() for u in saved.unsaved]
        )
    if restored is None:
        return prompting.Variables(restarted=True)
    return prompting.Variables(
        defined=[described[name] for name in restored.restored if name in described],
        lost=restored.lost,
        restarted=True,
        problem=restored.error,
    )

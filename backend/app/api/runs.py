from __future__ import annotations

import asyncio
import csv
import uuid
from pathlib import Path
from typing import Annotated, Literal

import pandas as pd
from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import FileResponse, StreamingResponse
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.background import BackgroundTask

from app import audit
from app.api.deps import (
    CurrentUser,
    DbDep,
    NeededRole,
    OwnedSession,
    PageDep,
    SettingsDep,
    StorageDep,
    previews_of,
    stream_reader,
)
from app.api.headers import stored_bytes_headers
from app.api.sse import SSE_RESPONSE_DOC, frames, sse_response
from app.db import release_connection
from app.errors import BadRequest, Conflict, NotFound, PayloadTooLarge, Unprocessable
from app.files import excel
from app.files.preview import UnreadableFile
from app.files.preview.paging import MAX_PAGE_ROWS, Window
from app.files.preview_process import run_preview
from app.files.schemas import FilePreview
from app.files.service import stream_object
from app.infra.events import RunEventLog
from app.infra.storage import ObjectNotFound, ObjectStorage
from app.models import Artifact, Run, Session
from app.runs import artifact_preview
from app.runs.orchestrator import RunOrchestrator
from app.runs.repository import history
from app.runs.schemas import (
    ApprovalDecision,
    ArtifactOut,
    InputAnswer,
    ModelList,
    ModelOut,
    QueryRequest,
    RunOut,
)
from app.runs.state import ACTIVE
from app.schemas import Page

router = APIRouter(tags=["runs"])

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def get_orchestrator(request: Request) -> RunOrchestrator:
    orchestrator: RunOrchestrator = request.app.state.runs
    return orchestrator


def get_events(request: Request) -> RunEventLog:
    events: RunEventLog = request.app.state.events
    return events


OrchestratorDep = Annotated[RunOrchestrator, Depends(get_orchestrator)]
EventsDep = Annotated[RunEventLog, Depends(get_events)]


async def owned_run(run_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole) -> Run:
    return await history.get_owned_run(db, user, run_id, need)


OwnedRun = Annotated[Run, Depends(owned_run)]


@router.post(
    "/sessions/{session_id}/query",
    response_class=StreamingResponse,
    responses={**SSE_RESPONSE_DOC, 409: {"description": "The session is busy (code session_busy)"}},
)
async def ask(
    body: QueryRequest,
    session: OwnedSession,
    db: DbDep,
    runs: OrchestratorDep,
    events: EventsDep,
    user: CurrentUser,
    request: Request,
) -> StreamingResponse:
    """Ask a question: starts a run and streams its events. The run goes on if the client leaves."""
    # The orchestrator records the run with sessions of its own: the request's connection
    # goes back first, so a burst of queries never waits on itself for connections.
    await release_connection(db)
    run = await runs.start(session, body, (user.id, user.email))
    allowed = stream_reader(request, user, session.id)
    return sse_response(frames(runs.follow(run.id, 0), allowed=allowed))


@router.get("/runs/{run_id}", response_model=RunOut)
async def get_run(run: OwnedRun) -> RunOut:
    return RunOut.model_validate(run)


@router.get("/runs/{run_id}/events", response_class=StreamingResponse, responses=SSE_RESPONSE_DOC)
async def run_events(
    run: OwnedRun,
    db: DbDep,
    runs: OrchestratorDep,
    request: Request,
    user: CurrentUser,
    after: Annotated[int | None, Query(ge=0, description="Replay events after this seq")] = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """Replay the events after Last-Event-ID (or ?after=N), then follow live until run.finished."""
    start = after if after is not None else _seq(last_event_id)
    await release_connection(db)  # a stream holds no connection while it waits
    replay, live = await runs.events(run.id, run.status, start)
    allowed = stream_reader(request, user, run.session_id)
    return sse_response(frames(live, replay, allowed))


def _seq(last_event_id: str | None) -> int:
    return int(last_event_id) if last_event_id and last_event_id.isdigit() else 0


@router.post(
    "/runs/{run_id}/cancel", response_model=RunOut, responses={409: {"description": "Not running"}}
)
async def cancel_run(run: OwnedRun, db: DbDep, runs: OrchestratorDep, user: CurrentUser) -> RunOut:
    """Stop the run at the next safe point (a running code step is killed)."""
    if run.status not in ACTIVE:
        raise Conflict(f"This run has already ended ({run.status}).", code="run_not_active")
    found = await db.execute(select(Session.project_id).where(Session.id == run.session_id))
    project_id = found.scalar_one()
    stopped = {"run_id": str(run.id), "query": run.query[: audit.QUERY_CHARS]}
    await audit.record(db, project_id, user, audit.Action.run_stopped, ("run", run.id), stopped)
    await release_connection(db)  # none is held while the run winds down
    await runs.cancel(run.id)
    return RunOut.model_validate(await history.get_run(db, run.id))


@router.post(
    "/runs/{run_id}/input", response_model=RunOut, responses={409: {"description": "Not waiting"}}
)
async def answer_run(
    body: InputAnswer, run: OwnedRun, db: DbDep, runs: OrchestratorDep, user: CurrentUser
) -> RunOut:
    """Answer the agent's question while the run is waiting_input: the answer is what its
    `ask_user` returns, and the run goes on (on this replica, whichever one it started on).
    Its stream (POST /query or GET /runs/{id}/events) carries on with input.received."""
    await release_connection(db)  # the run is resumed with connections of its own
    await runs.answer(run.id, body.answer, user.id)
    return RunOut.model_validate(await history.get_run(db, run.id))


@router.post(
    "/runs/{run_id}/approval",
    response_model=RunOut,
    responses={409: {"description": "Not waiting for approval (code not_waiting_approval)"}},
)
async def approve_run(
    body: ApprovalDecision, run: OwnedRun, db: DbDep, runs: OrchestratorDep, user: CurrentUser
) -> RunOut:
    """Decide on the code a run in review mode waits with: `approve` runs it, `edit` runs
    `code` instead (and the agent's memory records that), `reject` does not run it and the
    agent reads `feedback` as the step's result and tries again."""
    await release_connection(db)  # the run is resumed with connections of its own
    await runs.decide(run.id, body.decision, body.code, body.feedback, user.id)
    return RunOut.model_validate(await history.get_run(db, run.id))


@router.get("/models", response_model=ModelList)
async def list_models(_: CurrentUser, settings: SettingsDep) -> ModelList:
    """The models a user may pick; empty when no LLM is configured (see README: LLM_MODEL)."""
    models = settings.llm_models
    return ModelList(
        items=[
            ModelOut(id=m, label=m.split("/", 1)[-1], default=i == 0) for i, m in enumerate(models)
        ]
    )


async def owned_artifact(
    artifact_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> Artifact:
    return await history.get_owned_artifact(db, user, artifact_id, need)


OwnedArtifact = Annotated[Artifact, Depends(owned_artifact)]


@router.get("/sessions/{session_id}/runs", response_model=Page[RunOut])
async def list_runs(session: OwnedSession, db: DbDep, page: PageDep) -> Page[RunOut]:
    """The session's history, oldest first; a branch's begins with the runs of its past
    (`inherited`: they belong to the session it branched from, up to where it did)."""
    items, total = await history.list_runs(db, session, page.limit, page.offset)
    return Page(
        items=[
            RunOut.model_validate(r).model_copy(update={"inherited": r.session_id != session.id})
            for r in items
        ],
        total=total,
    )


@router.get("/sessions/{session_id}/artifacts", response_model=Page[ArtifactOut])
async def list_artifacts(session: OwnedSession, db: DbDep, page: PageDep) -> Page[ArtifactOut]:
    items, total = await history.list_artifacts(db, session, page.limit, page.offset)
    return Page(items=[ArtifactOut.model_validate(a) for a in items], total=total)


@router.get("/artifacts/{artifact_id}", response_model=ArtifactOut)
async def get_artifact(artifact: OwnedArtifact) -> ArtifactOut:
    return ArtifactOut.model_validate(artifact)


@router.get(
    "/artifacts/{artifact_id}/preview",
    response_model=FilePreview,
    responses={
        404: {"description": "No such artifact, or no such sheet in the workbook"},
        415: {"description": "Not a tabular file (preview_unsupported)"},
        422: {"description": "Cannot be parsed, or a sheet asked of a file with none"},
        503: {"description": "Too many of your previews wait already (server_busy)"},
    },
)
async def preview_artifact(
    artifact: OwnedArtifact,
    db: DbDep,
    storage: StorageDep,
    settings: SettingsDep,
    user: CurrentUser,
    sheet: Annotated[
        str | None,
        Query(min_length=1, max_length=255, description="A workbook's worksheet (default: first)"),
    ] = None,
    offset: Annotated[int, Query(ge=0, description="The first row to show, from 0")] = 0,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE_ROWS, description="How many rows to show (at most 500)")
    ] = 50,
    sort: Annotated[
        str | None,
        Query(min_length=1, max_length=1000, description="A column to sort all rows by"),
    ] = None,
    order: Annotated[Literal["asc", "desc"], Query(description="The sort's direction")] = "asc",
) -> FilePreview:
    """A tabular file the code wrote (CSV, TSV, Excel, Parquet, JSON) read as a dataset's
    preview is: its columns with their types, rows `offset` to `offset + limit` (sorted by
    `sort` over all rows), its row count, and a workbook's `sheets`."""
    window = Window(offset=offset, limit=limit, sort=sort, descending=order == "desc")
    await release_connection(db)
    with previews_of(user):
        shown = await artifact_preview.preview(
            storage, artifact, settings.previews_cache, sheet, window
        )
    return FilePreview.model_validate(shown)


@router.get(
    "/artifacts/{artifact_id}/content",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "The bytes"},
        400: {"description": "format=xlsx of something that is not a table (not_a_table)"},
        413: {"description": "Too large for an Excel sheet (too_large_for_excel)"},
        503: {"description": "Too many of your conversions wait already (server_busy)"},
    },
)
async def artifact_content(
    artifact: OwnedArtifact,
    db: DbDep,
    storage: StorageDep,
    settings: SettingsDep,
    user: CurrentUser,
    format: Annotated[
        Literal["xlsx"] | None,
        Query(description="xlsx: a table (all its rows) or a CSV as an Excel workbook"),
    ] = None,
) -> Response:
    data_dir = Path(settings.DATA_DIR)
    if format == "xlsx":
        with previews_of(user):
            return await excel_download(artifact, db, storage, data_dir)
    delimiter = excel.SPREADSHEET_DELIMITERS.get(Path(artifact.name).suffix.lower())
    if delimiter is not None:
        with previews_of(user):
            return await escaped_csv_download(artifact, db, storage, data_dir, delimiter)
    body = await stream_object(storage, artifact.storage_key)
    media_type, headers = stored_bytes_headers(artifact.name, artifact.mime)
    headers["Content-Length"] = str(artifact.size)
    return StreamingResponse(body, media_type=media_type, headers=headers)


# Escaping a CSV streams through it; a large one may take longer than a preview.
ESCAPE_CSV_SECONDS = 300.0


async def _local_source(
    storage: ObjectStorage, folder: Path, artifact: Artifact
) -> tuple[Path, Path]:
    """An artifact's bytes as a local file to convert (the stored object itself where the
    storage is a local folder, else a copy in `folder`, which the caller removes)."""
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    try:
        path = await storage.local_copy(artifact.storage_key, folder, f"{artifact.id}.source")
    except ObjectNotFound:
        raise NotFound("The contents are missing from storage.", code="content_missing") from None
    return folder, path


async def escaped_csv_download(
    artifact: Artifact, db: AsyncSession, storage: ObjectStorage, data_dir: Path, delimiter: str
) -> Response:
    """A CSV (or TSV) the code wrote, with every cell that a spreadsheet would run as a
    formula escaped (excel.escape_csv); converted in the preview child process."""
    await release_connection(db)
    folder, path = await _local_source(storage, data_dir / "cache" / "csv", artifact)
    target = folder / f"{uuid.uuid4().hex}{Path(artifact.name).suffix.lower()}"
    try:
        await run_preview(
            artifact.name,
            excel.escape_csv,
            path,
            target,
            delimiter=delimiter,
            time_limit=ESCAPE_CSV_SECONDS,
        )
    except UnreadableFile as exc:
        target.unlink(missing_ok=True)
        raise Unprocessable(str(exc), code="unreadable_table") from None
    except csv.Error as exc:
        target.unlink(missing_ok=True)
        raise Unprocessable(
            f"{artifact.name} could not be read as a table ({exc}).", code="unreadable_table"
        ) from None
    finally:
        if path.parent == folder:  # a copy made for the conversion, not the stored object
            path.unlink(missing_ok=True)
    media_type, headers = stored_bytes_headers(artifact.name, artifact.mime)
    return FileResponse(
        target,
        media_type=media_type,
        headers=headers,
        background=BackgroundTask(target.unlink, missing_ok=True),
    )


async def excel_download(
    artifact: Artifact, db: AsyncSession, storage: ObjectStorage, data_dir: Path
) -> Response:
    """A table artifact (from the CSV of all its rows that came with it) or a CSV file the
    code wrote, as one sheet of an .xlsx; converted in the preview child process."""
    source, from_json = await history.excel_source(db, artifact)
    if source is None:
        raise BadRequest(
            "Only tables and CSV files can be downloaded as Excel.", code="not_a_table"
        )
    await release_connection(db)
    if source.size > excel.MAX_SOURCE_BYTES:
        raise PayloadTooLarge(
            f"This table is too large to convert to Excel ({source.size:,} bytes); "
            "download the CSV instead.",
            code="too_large_for_excel",
        )
    folder, path = await _local_source(storage, data_dir / "cache" / "xlsx", source)
    stem = artifact.name.rsplit(".", 1)[0]
    target = folder / f"{uuid.uuid4().hex}.xlsx"
    try:
        await run_preview(
            artifact.name, excel.to_xlsx, path, target, sheet=stem, from_json=from_json
        )
    except excel.TooLargeForExcel as exc:
        raise PayloadTooLarge(str(exc), code="too_large_for_excel") from None
    except UnreadableFile as exc:
        raise Unprocessable(str(exc), code="unreadable_table") from None
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise Unprocessable(
            f"{source.name} could not be read as a table ({exc}).", code="unreadable_table"
        ) from None
    finally:
        if path.parent == folder:  # a copy made for the conversion, not the stored object
            path.unlink(missing_ok=True)
    media_type, headers = stored_bytes_headers(f"{stem}.xlsx", XLSX, inline=False)
    return FileResponse(
        target,
        media_type=media_type,
        headers=headers,
        background=BackgroundTask(target.unlink, missing_ok=True),
    )

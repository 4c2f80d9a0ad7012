from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse

from app.api.deps import CurrentUser, DbDep, OwnedSession, PageDep, StorageDep
from app.files.service import stream_object
from app.models import Artifact
from app.runs import service
from app.runs.schemas import ArtifactOut, RunOut
from app.schemas import Page

router = APIRouter(tags=["runs"])


async def owned_artifact(artifact_id: uuid.UUID, db: DbDep, user: CurrentUser) -> Artifact:
    return await service.get_owned_artifact(db, user, artifact_id)


OwnedArtifact = Annotated[Artifact, Depends(owned_artifact)]


@router.get("/sessions/{session_id}/runs", response_model=Page[RunOut])
async def list_runs(session: OwnedSession, db: DbDep, page: PageDep) -> Page[RunOut]:
    """The session's history, oldest first."""
    items, total = await service.list_runs(db, session, page.limit, page.offset)
    return Page(items=[RunOut.model_validate(r) for r in items], total=total)


@router.get("/sessions/{session_id}/artifacts", response_model=Page[ArtifactOut])
async def list_artifacts(session: OwnedSession, db: DbDep, page: PageDep) -> Page[ArtifactOut]:
    items, total = await service.list_artifacts(db, session, page.limit, page.offset)
    return Page(items=[ArtifactOut.model_validate(a) for a in items], total=total)


@router.get("/artifacts/{artifact_id}", response_model=ArtifactOut)
async def get_artifact(artifact: OwnedArtifact) -> ArtifactOut:
    return ArtifactOut.model_validate(artifact)


@router.get(
    "/artifacts/{artifact_id}/content",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/octet-stream": {}}, "description": "The bytes"}},
)
async def artifact_content(artifact: OwnedArtifact, storage: StorageDep) -> StreamingResponse:
    body = await stream_object(storage, artifact.storage_key)
    headers = {"Content-Length": str(artifact.size)}
    return StreamingResponse(body, media_type=artifact.mime, headers=headers)

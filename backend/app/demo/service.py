"""Opening the demo project: made once per user, found again afterwards.

It is an ordinary project of the user's (its own copy of the dataset, its sessions, their
cells), marked `is_demo`; its first session is marked `recorded`, its history loaded from
the recording (app.demo.recording) with the events the browser replays.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import cast

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.demo import dataset, recording
from app.files import service as files_service
from app.files.upload import MultipartFile
from app.infra.storage import ObjectStorage
from app.models import (
    Artifact,
    Project,
    Run,
    RunEventRow,
    RunKind,
    RunStatus,
    RunStep,
    Session,
    User,
)
from app.models.base import utcnow
from app.projects import service as projects_service
from app.projects.schemas import ProjectCreate
from app.quotas.guard import UploadQuota

NAME = "Demo: monthly sales"
DESCRIPTION = (
    "A demo project with a small dataset of its own (monthly sales by region) and a recorded "
    "session: replay it to see how a question is answered, or run your own Python and SQL."
)


class _Bytes:
    """A file's bytes offered as an upload's are (MultipartFile's open and chunks)."""

    def __init__(self, name: str, content: bytes):
        self.name, self.content = name, content

    async def open(self) -> str:
        return self.name

    async def chunks(self) -> AsyncIterator[bytes]:
        yield self.content


async def open_demo(
    db: AsyncSession, storage: ObjectStorage, settings: Settings, user: User
) -> tuple[Project, Session, bool]:
    """The user's demo project and its recorded session, made now if they have none.

    Returns:
        The project, the recorded session, and whether they were made now.
    """
    found = await db.scalar(
        select(Project).where(Project.owner_id == user.id, Project.is_demo).limit(1)
    )
    if found is not None:
        session = await db.scalar(
            select(Session)
            .where(Session.project_id == found.id)
            .order_by(Session.recorded.desc(), Session.created_at)
            .limit(1)
        )
        if session is None:  # the user deleted its sessions: the recording comes back
            session = await _recorded_session(db, storage, found, user)
        return found, session, False
    project = await projects_service.create(
        db, user, ProjectCreate(name=NAME, description=DESCRIPTION)
    )
    project.is_demo = True
    quota = UploadQuota(settings, project, user)
    await quota.measure(db)
    upload = cast(MultipartFile, _Bytes(dataset.NAME, dataset.content()))
    await files_service.upload(
        db,
        storage,
        project.id,
        upload,
        settings.MAX_UPLOAD_BYTES,
        quota,
        settings.FILE_VERSIONS_KEPT,
    )
    session = await _recorded_session(db, storage, project, user)
    return project, session, True


async def _recorded_session(
    db: AsyncSession, storage: ObjectStorage, project: Project, user: User
) -> Session:
    """A session whose history is the recording's: its run, steps, artifacts and events."""
    session = Session(id=uuid.uuid4(), project_id=project.id, recorded=True)
    run_id = uuid.uuid4()
    recorded, _ = recording.load(session.id, run_id)
    stored = recorded["run"]
    session.title = stored["query"][:200]
    db.add(session)
    await db.flush()
    now = utcnow()
    took = timedelta(milliseconds=sum(int(s.get("duration_ms") or 0) for s in stored["steps"]))
    db.add(
        Run(
            id=run_id,
            session_id=session.id,
            kind=RunKind.question,
            status=RunStatus.succeeded,
            user_id=user.id,
            query=stored["query"],
            model=stored["model"],
            final_answer=stored["final_answer"],
            tokens_in=stored["tokens_in"],
            tokens_out=stored["tokens_out"],
            cost_usd=stored.get("cost_usd"),
            created_at=now,
            started_at=now,
            finished_at=now + took,
        )
    )
    await db.flush()
    for step in stored["steps"]:
        db.add(
            RunStep(
                run_id=run_id,
                index=step["index"],
                thought=step.get("thought"),
                code=step.get("code"),
                output=step.get("output"),
                error=step.get("error"),
                duration_ms=step.get("duration_ms"),
                tokens_in=step.get("tokens_in") or 0,
                tokens_out=step.get("tokens_out") or 0,
            )
        )
    for artifact in stored["artifacts"]:
        key = f"sessions/{session.id}/artifacts/{uuid.uuid4().hex}"
        content = base64.b64decode(artifact["content"])
        await storage.put(key, _one(content), artifact["mime"])
        db.add(
            Artifact(
                id=uuid.UUID(artifact["id"]),
                run_id=run_id,
                session_id=session.id,
                step=artifact["step"],
                kind=artifact["kind"],
                name=artifact["name"],
                mime=artifact["mime"],
                size=len(content),
                storage_key=key,
                created_at=now,
            )
        )
    for seq, event in enumerate(recorded["events"], start=1):
        db.add(RunEventRow(run_id=run_id, seq=seq, event=event["event"], data=event["data"]))
    await db.flush()
    return session


async def _one(content: bytes) -> AsyncIterator[bytes]:
    yield content

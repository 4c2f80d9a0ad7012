"""Reading a session's history: its runs (with steps and artifacts) and its artifacts."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.branches import lineage
from app.db import paginate
from app.models import Artifact, Project, Run, Session, User
from app.ownership import Role, one_visible
from app.runs.errors import RunNotFound


async def list_runs(
    db: AsyncSession, session: Session, limit: int, offset: int
) -> tuple[list[Run], int]:
    """The session's history, oldest first: a branch's inherited runs, then its own."""
    chain = await lineage.segments(db, session)
    query = (
        select(Run).where(lineage.history_clause(session, chain)).order_by(Run.created_at, Run.id)
    )
    return await paginate(db, query, limit, offset)


async def list_artifacts(
    db: AsyncSession, session: Session, limit: int, offset: int
) -> tuple[list[Artifact], int]:
    query = (
        select(Artifact)
        .where(Artifact.session_id == session.id)
        .order_by(Artifact.created_at, Artifact.id)
    )
    return await paginate(db, query, limit, offset)


async def get_owned_artifact(
    db: AsyncSession, user: User, artifact_id: uuid.UUID, need: Role = Role.viewer
) -> Artifact:
    query = (
        select(Artifact)
        .join(Session, Session.id == Artifact.session_id)
        .join(Project, Project.id == Session.project_id)
        .where(Artifact.id == artifact_id)
    )
    missing = RunNotFound("No such artifact.", code="artifact_not_found")
    artifact: Artifact = await one_visible(db, user, query, missing, need)
    return artifact


async def artifact_keys(
    db: AsyncSession, *, session_id: uuid.UUID | None = None, project_id: uuid.UUID | None = None
) -> list[str]:
    """Storage keys of a session's (or a whole project's) artifacts, to delete with them."""
    query = select(Artifact.storage_key)
    if session_id is not None:
        query = query.where(Artifact.session_id == session_id)
    if project_id is not None:
        query = query.join(Session, Session.id == Artifact.session_id).where(
            Session.project_id == project_id
        )
    return list(await db.scalars(query))


async def get_owned_run(
    db: AsyncSession, user: User, run_id: uuid.UUID, need: Role = Role.viewer
) -> Run:
    query = (
        select(Run)
        .join(Session, Session.id == Run.session_id)
        .join(Project, Project.id == Session.project_id)
        .where(Run.id == run_id)
    )
    missing = RunNotFound("No such run.", code="run_not_found")
    run: Run = await one_visible(db, user, query, missing, need)
    return run


async def get_run(db: AsyncSession, run_id: uuid.UUID) -> Run:
    run = await db.get(Run, run_id, populate_existing=True)
    if run is None:
        raise RunNotFound("No such run.", code="run_not_found")
    await db.refresh(run, ["steps", "artifacts"])
    return run


async def excel_source(db: AsyncSession, artifact: Artifact) -> tuple[Artifact | None, bool]:
    """What an Excel download of `artifact` converts: a table's full-data CSV (the file
    artifact of the same step and name that display() wrote with it) or else the table's
    own preview; a CSV file itself. (None, False) for anything else."""
    if artifact.kind == "table":
        stem = artifact.name.rsplit(".", 1)[0]
        companion = (
            await db.scalars(
                select(Artifact).where(
                    Artifact.run_id == artifact.run_id,
                    Artifact.step == artifact.step,
                    Artifact.kind == "file",
                    Artifact.name == f"{stem}.csv",
                )
            )
        ).first()
        return (companion, False) if companion is not None else (artifact, True)
    if artifact.kind == "file" and artifact.name.lower().endswith(".csv"):
        return artifact, False
    return None, False

"""What a project and a user keep in storage, read from the tables that record sizes.

A project's usage is every kept version of its files (the current one included), the
preview copies made of them, and its sessions' artifacts and snapshots, whoever made them
(each snapshot chunk once, however many kept run states name it: `app.runs.run_states`).
A user's usage is what they brought, in every project: the versions they uploaded (and
their preview copies), the artifacts of the questions they asked, and the snapshots of the
sessions whose latest question was theirs (a snapshot holds the state that question left).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Select, and_, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import (
    Artifact,
    File,
    FileVersion,
    Project,
    Run,
    RunState,
    Session,
    SnapshotChunk,
)
from app.quotas.copies import copies_bytes
from app.runs.snapshot_chunks import digests_of


@dataclass(frozen=True)
class StorageUsage:
    """Bytes kept, by what keeps them; `quota_bytes` None: unlimited."""

    quota_bytes: int | None
    files: int = 0
    versions: int = 0
    files_bytes: int = 0
    copies_bytes: int = 0
    artifacts: int = 0
    artifacts_bytes: int = 0
    snapshots: int = 0
    snapshots_bytes: int = 0
    projects: int = 0
    snapshots_refused: str | None = None

    @property
    def used_bytes(self) -> int:
        return self.files_bytes + self.copies_bytes + self.artifacts_bytes + self.snapshots_bytes

    @property
    def room_bytes(self) -> int | None:
        """What may still be stored (None: no limit)."""
        if self.quota_bytes is None:
            return None
        return max(0, self.quota_bytes - self.used_bytes)


async def of_project(
    db: AsyncSession, project_id: uuid.UUID, quota_bytes: int | None, cache_dir: Path | None
) -> StorageUsage:
    """The project's usage: its files' versions and their copies, its sessions' artifacts
    and snapshots."""
    versions = (
        select(FileVersion)
        .join(File, File.id == FileVersion.file_id)
        .where(File.project_id == project_id)
    )
    in_project = Session.project_id == project_id
    artifacts = select(Artifact).join(Session, Session.id == Artifact.session_id).where(in_project)
    usage = await _usage(db, quota_bytes, cache_dir, versions, artifacts, in_project, True)
    count, stored = await _project_states(db, project_id)
    refusal = await db.scalar(select(Project.snapshot_refusal).where(Project.id == project_id))
    return replace(
        usage,
        snapshots=usage.snapshots + count,
        snapshots_bytes=usage.snapshots_bytes + stored,
        snapshots_refused=refusal,
    )


async def of_user(
    db: AsyncSession, user_id: uuid.UUID, quota_bytes: int | None, cache_dir: Path | None
) -> StorageUsage:
    """The user's usage in every project: the versions they uploaded and their copies, the
    artifacts of their questions, the snapshots their latest questions left."""
    versions = select(FileVersion).where(FileVersion.uploaded_by == user_id)
    artifacts = select(Artifact).join(Run, Run.id == Artifact.run_id).where(Run.user_id == user_id)
    latest_asker = (
        select(Run.user_id)
        .where(Run.session_id == Session.id)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    return await _usage(db, quota_bytes, cache_dir, versions, artifacts, latest_asker == user_id)


async def _usage(
    db: AsyncSession,
    quota_bytes: int | None,
    cache_dir: Path | None,
    versions: Select[Any],
    artifacts: Select[Any],
    sessions: ColumnElement[bool],
    only_legacy: bool = False,
) -> StorageUsage:
    kept = versions.subquery()
    row = (
        await db.execute(
            select(
                func.count(func.distinct(kept.c.file_id)),
                func.count(),
                func.coalesce(func.sum(kept.c.size), 0),
            ).select_from(kept)
        )
    ).one()
    files, version_count, files_bytes = (int(v) for v in row)
    digests = set(await db.scalars(select(kept.c.sha256).distinct()))
    projects = await db.scalar(
        select(func.count(func.distinct(File.project_id))).where(
            File.id.in_(select(kept.c.file_id))
        )
    )
    made = artifacts.subquery()
    artifact_count, artifacts_bytes = (
        await db.execute(
            select(func.count(), func.coalesce(func.sum(made.c.size), 0)).select_from(made)
        )
    ).one()
    # As text, then a big integer: PostgreSQL's as_integer() is 32 bits.
    saved = cast(Session.snapshot["bytes"].as_string(), BigInteger)
    if only_legacy:  # a chunked snapshot is counted by its chunks (_project_states)
        sessions = and_(sessions, Session.snapshot["format"].as_string().is_(None))
    snapshot_count, snapshots_bytes = (
        await db.execute(
            select(func.count(), func.coalesce(func.sum(saved), 0)).where(
                sessions, saved.is_not(None)
            )
        )
    ).one()
    return StorageUsage(
        quota_bytes=quota_bytes,
        files=files,
        versions=version_count,
        files_bytes=files_bytes,
        copies_bytes=await asyncio.to_thread(copies_bytes, cache_dir, digests),
        artifacts=int(artifact_count),
        artifacts_bytes=int(artifacts_bytes),
        snapshots=int(snapshot_count),
        snapshots_bytes=int(snapshots_bytes),
        projects=int(projects or 0),
    )


async def _project_states(db: AsyncSession, project_id: uuid.UUID) -> tuple[int, int]:
    """The project's kept run states, and the bytes of the chunks they are stored as."""
    states = await db.scalar(
        select(func.count()).select_from(RunState).where(RunState.project_id == project_id)
    )
    stored = await db.scalar(
        select(func.coalesce(func.sum(SnapshotChunk.size), 0)).where(
            SnapshotChunk.project_id == project_id
        )
    )
    return int(states or 0), int(stored or 0)


async def of_session(db: AsyncSession, session_id: uuid.UUID) -> tuple[int, int]:
    """A session's kept run states, and the bytes of the distinct chunks they name (shared
    with other sessions of the project, so the sessions' figures do not add up)."""
    rows = (
        await db.execute(
            select(RunState.project_id, RunState.record).where(RunState.session_id == session_id)
        )
    ).all()
    if not rows:
        return 0, 0
    named: set[str] = set()
    for _, record in rows:
        named |= digests_of(record)
    project_id = rows[0][0]
    total = 0
    ordered = sorted(named)
    for start in range(0, len(ordered), 500):
        total += int(
            await db.scalar(
                select(func.coalesce(func.sum(SnapshotChunk.size), 0)).where(
                    SnapshotChunk.project_id == project_id,
                    SnapshotChunk.sha256.in_(ordered[start : start + 500]),
                )
            )
            or 0
        )
    return len(rows), total

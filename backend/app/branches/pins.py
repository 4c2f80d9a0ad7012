"""A branch's project files are the versions its past read (issue 43).

When a branch is made, each file its past's runs read (`run_file_reads`) is pinned to the
version the last of them read; a file its past never read keeps what the session the
branch continues from had (its pin, if it had one), else the latest. The branch's runs
(questions, cells, the replay of its past) are given the pinned versions
(`apply`, from app.runs.repository.lifecycle), until the user moves the branch to the
latest versions (`unpin`, `POST /sessions/{id}/files/unpin`). A pinned version no longer
kept (pruned past FILE_VERSIONS_KEPT) gives way to the latest, and the session says so.
"""

from __future__ import annotations

import uuid

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.branches import lineage
from app.models import File, FileVersion, Run, RunFileRead, Session, SessionFilePin
from app.sessions.schemas import FilePin


async def pin_past(db: AsyncSession, branch: Session, owner: Session | None) -> None:
    """Pin the new branch's files to the versions its past read (see module); `owner` is
    the session of the run it continues after (its pins carry over for files not read)."""
    chain = await lineage.segments(db, branch)
    inherited = lineage.inherited_clause(chain)
    pinned: dict[uuid.UUID, int] = {}
    if owner is not None:
        rows = await db.execute(
            select(SessionFilePin.file_id, SessionFilePin.version).where(
                SessionFilePin.session_id == owner.id
            )
        )
        pinned.update({file_id: version for file_id, version in rows})
    if inherited is not None:
        reads = await db.execute(
            select(RunFileRead.file_id, RunFileRead.version)
            .join(Run, Run.id == RunFileRead.run_id)
            .where(inherited)
            .order_by(Run.created_at, Run.id)
        )
        pinned.update({file_id: version for file_id, version in reads})  # the last read wins
    if not pinned:
        return
    alive = set(
        await db.scalars(
            select(File.id).where(File.project_id == branch.project_id, File.id.in_(pinned))
        )
    )
    for file_id, version in pinned.items():
        if file_id in alive:
            db.add(SessionFilePin(session_id=branch.id, file_id=file_id, version=version))
    await db.flush()


async def apply(db: AsyncSession, session_id: uuid.UUID, files: list[File]) -> list[File]:
    """The project's files as the session's runs see them: each pinned file at its pinned
    version (when that version is still kept), the others as they are."""
    pins = dict(
        (
            await db.execute(
                select(SessionFilePin.file_id, SessionFilePin.version).where(
                    SessionFilePin.session_id == session_id
                )
            )
        ).all()
    )
    versions = {f.id: f.version for f in files}
    behind = {fid: v for fid, v in pins.items() if fid in versions and versions[fid] != v}
    if not behind:
        return files
    stored = {
        (v.file_id, v.version): v
        for v in await db.scalars(select(FileVersion).where(FileVersion.file_id.in_(behind)))
    }
    seen = []
    for file in files:
        old = stored.get((file.id, behind.get(file.id, -1)))
        seen.append(file if old is None else as_of(file, old))
    return seen


def as_of(now: File, stored: FileVersion) -> File:
    """The file as it was at `stored` (not added to any database session)."""
    return File(
        id=now.id,
        project_id=now.project_id,
        name=now.name,
        size=stored.size,
        content_type=now.content_type,
        sha256=stored.sha256,
        storage_key=stored.storage_key,
        row_count=stored.row_count,
        version=stored.version,
    )


async def of_session(db: AsyncSession, session_id: uuid.UUID) -> list[FilePin]:
    """The session's pinned files, by name, with the latest version and whether the
    pinned one is still kept."""
    rows = (
        await db.execute(
            select(File.id, File.name, File.version, SessionFilePin.version, FileVersion.id)
            .join(SessionFilePin, SessionFilePin.file_id == File.id)
            .outerjoin(
                FileVersion,
                (FileVersion.file_id == File.id) & (FileVersion.version == SessionFilePin.version),
            )
            .where(SessionFilePin.session_id == session_id)
            .order_by(File.name, File.id)
        )
    ).all()
    return [
        FilePin(
            file_id=file_id,
            name=name,
            version=version,
            latest_version=latest,
            kept=kept is not None or version == latest,
        )
        for file_id, name, latest, version, kept in rows
    ]


async def unpin(db: AsyncSession, session_id: uuid.UUID) -> int:
    """Move the session to the latest version of every file; how many pins went."""
    gone = await db.execute(delete(SessionFilePin).where(SessionFilePin.session_id == session_id))
    return int(getattr(gone, "rowcount", 0) or 0)

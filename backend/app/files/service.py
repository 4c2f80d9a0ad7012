"""Dataset files: streamed uploads, downloads, deletion and previews."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import after_commit, paginate
from app.errors import (
    AppError,
    Conflict,
    NotFound,
    PayloadTooLarge,
    ServiceUnavailable,
    UnsupportedMediaType,
)
from app.files import preview as previews
from app.files.previewing import check as check  # previews and profiles live there
from app.files.previewing import preview as preview
from app.files.previewing import profile as profile
from app.files.upload import MultipartFile, clean_file_name
from app.files.whole_file_work import remove_copies
from app.infra.storage import ObjectNotFound, ObjectStorage, delete_objects
from app.models import File, FileVersion, Project, Run, RunFileRead, Session, User
from app.models.base import utcnow
from app.ownership import Role, one_visible
from app.quotas.guard import UploadQuota

log = logging.getLogger(__name__)


# What a data-analysis session can use: tables, plus the documents and archives that come with them.
CONTENT_TYPES = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".tab": "text/tab-separated-values",
    ".txt": "text/plain",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/x-ndjson",
    ".geojson": "application/geo+json",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
    ".xls": "application/vnd.ms-excel",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".parquet": "application/vnd.apache.parquet",
    ".pq": "application/vnd.apache.parquet",
    ".feather": "application/vnd.apache.arrow.file",
    ".arrow": "application/vnd.apache.arrow.file",
    ".orc": "application/octet-stream",
    ".avro": "application/octet-stream",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".md": "text/markdown",
    ".pdf": "application/pdf",
    ".sqlite": "application/vnd.sqlite3",
    ".db": "application/vnd.sqlite3",
    ".dta": "application/x-stata-dta",
    ".sav": "application/x-spss-sav",
    ".sas7bdat": "application/x-sas-data",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
}


def content_type_for(name: str) -> str:
    """Our own mapping by extension; what the client claims is not trusted."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in CONTENT_TYPES:
        allowed = ", ".join(sorted(CONTENT_TYPES))
        raise UnsupportedMediaType(
            f"{name}: files of this type cannot be used here. Supported: {allowed}."
        )
    return CONTENT_TYPES[suffix]


def storage_key(project_id: uuid.UUID) -> str:
    return f"projects/{project_id}/files/{uuid.uuid4().hex}"


@dataclass
class _Received:
    size: int = 0
    sha256: str = ""
    row_count: int | None = None


async def _measured(
    chunks: AsyncIterator[bytes], name: str, limit: int, out: _Received, quota: UploadQuota
) -> AsyncIterator[bytes]:
    """Pass chunks through, counting, hashing and refusing more than `limit` bytes, or more
    than the storage quotas leave room for."""
    digest = hashlib.sha256()
    counter = previews.CsvRowCounter() if previews.preview_kind(name) == "csv" else None
    room = quota.room()
    async for chunk in chunks:
        out.size += len(chunk)
        if out.size > limit:
            raise PayloadTooLarge(f"{name} is larger than the upload limit of {limit:,} bytes.")
        if room is not None and out.size > room:
            quota.refuse(out.size)
        digest.update(chunk)
        if counter is not None:
            counter.feed(chunk)
        yield chunk
    out.sha256 = digest.hexdigest()
    out.row_count = counter.finish() if counter is not None else None


async def get_owned(
    db: AsyncSession, user: User, file_id: uuid.UUID, need: Role = Role.viewer
) -> File:
    query = select(File).join(Project, Project.id == File.project_id).where(File.id == file_id)
    missing = NotFound("No such file.", code="file_not_found")
    file: File = await one_visible(db, user, query, missing, need)
    return file


async def list_for_project(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[File], int]:
    query = select(File).where(File.project_id == project.id).order_by(File.name, File.id)
    return await paginate(db, query, limit, offset)


async def upload(
    db: AsyncSession,
    storage: ObjectStorage,
    project_id: uuid.UUID,
    form: MultipartFile,
    limit: int,
    quota: UploadQuota,
    versions_kept: int = 10,
    cache_dir: Path | None = None,
) -> File:
    """Stream the request's file into storage, then record it.

    A file with the same name in the project gets a new version: it keeps its id (so
    references to it stay valid), the new bytes are what it reads from now on, and the old
    ones stay as its previous version; past `versions_kept` versions, the oldest are deleted
    once the new row has committed (with their copies in `cache_dir`, the previews' cache,
    when no other file holds the same bytes). The bytes are charged to the project and to
    the uploader (`quota`, measured by the caller): more than its room is refused while they
    stream, and the recorded upload is measured again (app.quotas.guard). If anything fails,
    the new bytes are deleted and no row is written.
    """
    name = clean_file_name(await form.open())
    content_type = content_type_for(name)
    key = storage_key(project_id)
    received = _Received()
    try:
        await storage.put(key, _measured(form.chunks(), name, limit, received, quota), content_type)
    except AppError:
        raise
    except Exception as exc:
        log.exception("storing %s failed", name)
        raise ServiceUnavailable(
            f"Storage failed while saving {name} ({type(exc).__name__}: {str(exc)[:200]}); "
            "nothing was kept.",
            code="storage_unavailable",
        ) from exc
    try:
        project = await db.get(Project, project_id)
        if project is None:
            raise NotFound("The project was deleted during the upload.", code="project_not_found")
        file = await _record(
            db,
            storage,
            project,
            name,
            key,
            content_type,
            received,
            versions_kept,
            cache_dir,
            quota.user.id,
        )
        await quota.settle(db, received.size, new_file=file.version == 1)
    except BaseException:
        await asyncio.shield(storage.delete(key))
        raise
    return file


async def _record(
    db: AsyncSession,
    storage: ObjectStorage,
    project: Project,
    name: str,
    key: str,
    content_type: str,
    received: _Received,
    versions_kept: int,
    cache_dir: Path | None,
    uploader: uuid.UUID,
) -> File:
    fields: dict[str, Any] = {
        "size": received.size,
        "sha256": received.sha256,
        "content_type": content_type,
        "storage_key": key,
        "row_count": received.row_count,
        "preview": None,
        "check": None,
        "problem": None,
    }
    existing = (
        await db.scalars(
            select(File).where(File.project_id == project.id, File.name == name).with_for_update()
        )
    ).one_or_none()
    if existing is not None:
        for attr, value in fields.items():
            setattr(existing, attr, value)
        existing.version += 1
        existing.updated_at = utcnow()
        file = existing
    else:
        file = File(project_id=project.id, name=name, version=1, **fields)
        db.add(file)
    try:
        async with db.begin_nested():
            await db.flush()
            db.add(
                FileVersion(
                    file_id=file.id,
                    version=file.version,
                    size=received.size,
                    sha256=received.sha256,
                    storage_key=key,
                    row_count=received.row_count,
                    created_at=file.updated_at,
                    uploaded_by=uploader,
                )
            )
            await db.flush()
    except IntegrityError:
        raise Conflict(
            f"{name} was uploaded by another request at the same moment; try again.",
            code="upload_conflict",
        ) from None
    project.updated_at = utcnow()
    await _prune_versions(db, storage, file, versions_kept, cache_dir)
    return file


async def _prune_versions(
    db: AsyncSession, storage: ObjectStorage, file: File, kept: int, cache_dir: Path | None
) -> None:
    old = list(
        await db.scalars(
            select(FileVersion)
            .where(FileVersion.file_id == file.id)
            .order_by(FileVersion.version.desc())
            .offset(kept)
        )
    )
    for version in old:
        await db.delete(version)
    if old:
        keys = [v.storage_key for v in old]
        after_commit(db, lambda: delete_objects(storage, keys))
        await db.flush()
        await forget_copies(db, cache_dir, {v.sha256 for v in old})


async def forget_copies(db: AsyncSession, cache_dir: Path | None, digests: set[str]) -> None:
    """Once the transaction commits, remove from the previews' cache what it keeps of these
    contents (a local copy, a page's UTF-8 copy or Parquet table), for those no file or kept
    version of any project holds any more. Call it after the rows went (flushed)."""
    if cache_dir is None or not digests:
        return
    held = set(await db.scalars(select(File.sha256).where(File.sha256.in_(digests))))
    held |= set(await db.scalars(select(FileVersion.sha256).where(FileVersion.sha256.in_(digests))))
    unused = sorted(digests - held)
    if unused:
        after_commit(db, lambda: asyncio.to_thread(remove_copies, cache_dir, unused))


async def versions(db: AsyncSession, file: File) -> list[FileVersion]:
    """The file's kept versions, newest first."""
    query = (
        select(FileVersion)
        .where(FileVersion.file_id == file.id)
        .order_by(FileVersion.version.desc())
    )
    return list(await db.scalars(query))


async def readers(
    db: AsyncSession, file: File, limit: int
) -> dict[int, tuple[list[dict[str, Any]], int]]:
    """The questions of the file's project whose code read each version of it, in one
    query: version -> (the newest `limit` of them, newest first; how many in all).

    Only runs of the file's own project count (their sessions are the project's), so
    nothing outside what the caller may see comes back.
    """
    ranked = (
        select(
            RunFileRead.version,
            Run.id.label("run_id"),
            Run.session_id,
            Session.title.label("session_title"),
            Run.query,
            Run.created_at.label("asked_at"),
            func.row_number()
            .over(
                partition_by=RunFileRead.version,
                order_by=(Run.created_at.desc(), Run.id.desc()),
            )
            .label("rank"),
            func.count().over(partition_by=RunFileRead.version).label("total"),
        )
        .join(Run, Run.id == RunFileRead.run_id)
        .join(Session, Session.id == Run.session_id)
        .where(RunFileRead.file_id == file.id, Session.project_id == file.project_id)
        .subquery()
    )
    rows = await db.execute(
        select(ranked).where(ranked.c.rank <= limit).order_by(ranked.c.version, ranked.c.rank)
    )
    found: dict[int, tuple[list[dict[str, Any]], int]] = {}
    for row in rows.mappings():
        readers_of, _ = found.get(row["version"], ([], 0))
        readers_of.append(
            {
                "run_id": row["run_id"],
                "session_id": row["session_id"],
                "session_title": row["session_title"] or "",
                "query": row["query"],
                "asked_at": row["asked_at"],
            }
        )
        found[row["version"]] = (readers_of, int(row["total"]))
    return found


async def get_version(db: AsyncSession, file: File, number: int) -> FileVersion:
    found = (
        await db.scalars(
            select(FileVersion).where(FileVersion.file_id == file.id, FileVersion.version == number)
        )
    ).one_or_none()
    if found is None:
        raise NotFound(
            f"{file.name} has no version {number} (it may be older than the versions kept).",
            code="version_not_found",
        )
    return found


async def _kept_versions(
    db: AsyncSession, file_id: uuid.UUID | None, project_id: uuid.UUID | None
) -> list[tuple[str, str]]:
    """(storage key, SHA-256) of every kept version of a file (or of a project's files)."""
    query = select(FileVersion.storage_key, FileVersion.sha256)
    if file_id is not None:
        query = query.where(FileVersion.file_id == file_id)
    if project_id is not None:
        query = query.join(File, File.id == FileVersion.file_id).where(
            File.project_id == project_id
        )
    return [(key, digest) for key, digest in (await db.execute(query)).all()]


async def version_keys(
    db: AsyncSession, *, file_id: uuid.UUID | None = None, project_id: uuid.UUID | None = None
) -> list[str]:
    """Storage keys of every kept version of a file (or of a project's files)."""
    return [key for key, _ in await _kept_versions(db, file_id, project_id)]


async def version_digests(
    db: AsyncSession, *, file_id: uuid.UUID | None = None, project_id: uuid.UUID | None = None
) -> set[str]:
    """The contents (SHA-256) of every kept version of a file (or of a project's files)."""
    return {digest for _, digest in await _kept_versions(db, file_id, project_id)}


async def delete(
    db: AsyncSession, storage: ObjectStorage, file: File, cache_dir: Path | None = None
) -> None:
    """Delete the file and its versions: their bytes in storage and their copies in the
    previews' cache go once the transaction commits."""
    keys = {file.storage_key, *await version_keys(db, file_id=file.id)}
    digests = {file.sha256, *await version_digests(db, file_id=file.id)}
    await db.delete(file)
    await db.flush()
    after_commit(db, lambda: delete_objects(storage, sorted(keys)))
    await forget_copies(db, cache_dir, digests)


async def stream_object(storage: ObjectStorage, key: str) -> AsyncIterator[bytes]:
    """An object's bytes; fails before the first byte (so before any response) if it is missing."""
    iterator = storage.iter_bytes(key)
    try:
        first = await anext(iterator, b"")
    except ObjectNotFound:
        log.error("no object at %s", key)
        raise NotFound("The contents are missing from storage.", code="content_missing") from None

    async def stream() -> AsyncIterator[bytes]:
        if first:
            yield first
        async for chunk in iterator:
            yield chunk

    return stream()

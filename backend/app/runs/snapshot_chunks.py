"""Snapshot files as content-addressed chunks in object storage (issue 43).

A snapshot file is cut into chunks of CHUNK_BYTES (the last one shorter), each stored under
`snapshot-chunks/<project>/<sha256>` and recorded in `snapshot_chunks`; a chunk already
there is not stored again, so a DataFrame that ten questions leave untouched (the worker
writes the same DataFrame as the same bytes) is stored once. Chunks are per project: one
project's data is never deduplicated against, or reachable from, another's, and no API
names a chunk's key — a record is only ever read from the database, with the project of
the session that reads it.

Reading streams each chunk into its file, checking its size and digest as it arrives: a
missing or damaged chunk fails the load with `ChunkMissing` / `ChunkDamaged`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.infra.storage import ObjectNotFound, ObjectStorage
from app.models import SnapshotChunk, SnapshotOrphanSuspect
from app.models.base import utcnow

CHUNK_BYTES = 4 << 20
CONTENT_TYPE = "application/octet-stream"
DIGEST = re.compile(r"[0-9a-f]{64}")
# How many digests one statement names (SQLite allows a few thousand parameters).
BATCH = 500
Factory = Callable[[], Any]  # async_sessionmaker[AsyncSession]


class ChunkDamaged(ValueError):
    """A stored chunk does not have the size or digest its record says."""


class ChunkMissing(ValueError):
    """A chunk a record names is not in storage (dropped, or lost)."""


def key(project_id: uuid.UUID, digest: str) -> str:
    if not DIGEST.fullmatch(digest):
        raise ChunkDamaged(f"not a chunk digest: {digest[:80]!r}")
    return f"snapshot-chunks/{project_id}/{digest}"


def prefix(project_id: uuid.UUID) -> str:
    return f"snapshot-chunks/{project_id}/"


def chunk_sizes(size: int, count: int, chunk_bytes: int = CHUNK_BYTES) -> list[int]:
    """The sizes of a file's chunks.

    Raises:
        ChunkDamaged: `count` chunks cannot make a file of `size` bytes.
    """
    expected = -(-size // chunk_bytes)
    if count != expected:
        raise ChunkDamaged(f"{count} chunks cannot hold {size} bytes")
    return [min(chunk_bytes, size - start) for start in range(0, size, chunk_bytes)]


def digests_of(record: dict[str, Any] | None) -> set[str]:
    """Every chunk a snapshot record names (none for a one-object record)."""
    found: set[str] = set()
    for file in (record or {}).get("files") or []:
        chunks = file.get("chunks") if isinstance(file, dict) else None
        if isinstance(chunks, list):
            found.update(c for c in chunks if isinstance(c, str) and DIGEST.fullmatch(c))
    return found


def is_chunked(record: dict[str, Any] | None) -> bool:
    return bool(record) and record.get("format") == "chunks"  # type: ignore[union-attr]


@dataclass
class ChunkWriter:
    """Stores a run's snapshot files as chunks of one project (see the module's doc).

    Attributes:
        known: The digests the project has stored (read once, grown as chunks are added).
        new_bytes: What this writer stored (the chunks no earlier snapshot had).
    """

    storage: ObjectStorage
    factory: Factory
    project_id: uuid.UUID
    known: set[str] = field(default_factory=set)
    new_bytes: int = 0

    async def load_known(self) -> None:
        async with self.factory() as db:
            query = select(SnapshotChunk.sha256).where(SnapshotChunk.project_id == self.project_id)
            self.known = set(await db.scalars(query))

    async def store_file(self, fd: int, size: int, *, force: Iterable[str] = ()) -> list[str]:
        """The digests of the file's chunks, storing those the project does not have (and
        those in `force`: chunks found gone since).

        Raises:
            ChunkDamaged: The file shrank while it was read.
        """
        digests: list[str] = []
        again = set(force)
        for offset in range(0, size, CHUNK_BYTES):
            length = min(CHUNK_BYTES, size - offset)
            data, digest = await asyncio.to_thread(_read_and_hash, fd, offset, length)
            digests.append(digest)
            if digest in self.known and digest not in again:
                continue
            await self.storage.put(key(self.project_id, digest), _one(data), CONTENT_TYPE)
            if await self._add_row(digest, length):  # swept as an orphan before its row
                await self.storage.put(key(self.project_id, digest), _one(data), CONTENT_TYPE)
            self.known.add(digest)
            again.discard(digest)
            self.new_bytes += length
        return digests

    async def _add_row(self, digest: str, size: int) -> bool:
        """Add the chunk's row; whether the sweep deleted its object as an orphan between
        its upload and now (app.runs.chunk_sweep: then it is stored again)."""
        async with self.factory() as db:
            # In the row's transaction: waits for a sweep deleting the object, and sees it.
            cleared = await db.execute(
                delete(SnapshotOrphanSuspect)
                .where(
                    SnapshotOrphanSuspect.project_id == self.project_id,
                    SnapshotOrphanSuspect.sha256 == digest,
                )
                .returning(SnapshotOrphanSuspect.deleted_at)
            )
            swept = any(deleted_at is not None for deleted_at in cleared.scalars())
            now = utcnow()
            db.add(
                SnapshotChunk(
                    project_id=self.project_id,
                    sha256=digest,
                    size=size,
                    created_at=now,
                    used_at=now,
                )
            )
            try:
                await db.commit()
            except IntegrityError:  # stored meanwhile by another run: the bytes are the same
                await db.rollback()
                await touch(db, self.project_id, {digest})
                await db.commit()
            return swept


def _read_and_hash(fd: int, offset: int, length: int) -> tuple[bytes, str]:
    data = os.pread(fd, length, offset)
    if len(data) != length:
        raise ChunkDamaged("a snapshot file shrank while it was stored")
    return data, hashlib.sha256(data).hexdigest()


async def _one(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def touch(db: AsyncSession, project_id: uuid.UUID, digests: set[str]) -> set[str]:
    """Mark the chunks as used now (in `db`'s transaction); the digests no longer stored.

    A chunk touched here is safe from the sweep: it deletes only chunks unused for a while,
    checked again, row locked, as it deletes (`app.runs.state_retention`).
    """
    wanted = sorted(digests)
    found: set[str] = set()
    now = utcnow()
    for start in range(0, len(wanted), BATCH):
        batch = wanted[start : start + BATCH]
        where = (SnapshotChunk.project_id == project_id, SnapshotChunk.sha256.in_(batch))
        await db.execute(update(SnapshotChunk).where(*where).values(used_at=now))
        found.update(await db.scalars(select(SnapshotChunk.sha256).where(*where)))
    return set(wanted) - found


async def read_file(
    storage: ObjectStorage,
    project_id: uuid.UUID,
    name: str,
    size: int,
    digests: list[str],
    write: Callable[[bytes], None],
) -> None:
    """Stream a file's chunks to `write` (a blocking writer, called in a thread), each
    checked against its digest and size before it is written.

    Raises:
        ChunkMissing: A chunk is not in storage.
        ChunkDamaged: A chunk is not what its record says.
    """
    for digest, expected in zip(digests, chunk_sizes(size, len(digests)), strict=True):
        hasher = hashlib.sha256()
        parts: list[bytes] = []
        got = 0
        try:
            async for part in storage.iter_bytes(key(project_id, digest)):
                got += len(part)
                if got > expected:
                    raise ChunkDamaged(f"a chunk of {name} is longer than recorded")
                hasher.update(part)
                parts.append(part)
        except ObjectNotFound:
            raise ChunkMissing(f"a chunk of {name} ({digest[:12]}…) is no longer stored") from None
        if got != expected or hasher.hexdigest() != digest:
            raise ChunkDamaged(f"a chunk of {name} ({digest[:12]}…) is damaged")
        # One chunk (CHUNK_BYTES) held at a time: checked whole before any of it is written.
        await asyncio.to_thread(write, b"".join(parts))

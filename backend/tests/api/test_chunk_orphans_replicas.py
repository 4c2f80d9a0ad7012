"""Orphan snapshot chunks (objects stored with no row) across replicas: what a pass saw is
kept in the shared database, so a second replica's pass deletes what the first one saw
(not only what it saw itself); a chunk whose row came is kept; and a writer whose upload
was swept before its row stores the bytes again."""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from app.infra.storage import ObjectStorage
from app.models import SnapshotOrphanSuspect
from app.runs.chunk_sweep import orphans
from app.runs.snapshot_chunks import ChunkWriter, key
from tests.api.test_run_states import chunk_objects, chunk_rows
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api
from tests.support.server import LiveServer


async def _one(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _put(live: LiveServer, project_id: str, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    target = key(uuid.UUID(project_id), digest)
    live.call(live.state.storage.put(target, _one(data), "application/octet-stream"))
    return digest


def _pass(live: LiveServer, project_id: str) -> int:
    """One orphan pass of this replica over the project, with no grace."""
    state = live.state
    return live.call(orphans(state.session_factory, state.storage, uuid.UUID(project_id), 0))


def _suspects(live: LiveServer, project_id: str) -> dict[str, bool]:
    async def read() -> dict[str, bool]:
        async with live.state.session_factory() as db:
            rows = await db.execute(
                select(SnapshotOrphanSuspect.sha256, SnapshotOrphanSuspect.deleted_at).where(
                    SnapshotOrphanSuspect.project_id == uuid.UUID(project_id)
                )
            )
            return {digest: deleted is not None for digest, deleted in rows}

    return live.call(read())


def _store(live: LiveServer, project_id: str, data: bytes, storage: ObjectStorage) -> list[str]:
    """A run's writer stores `data` as one chunk (through `storage`)."""
    writer = ChunkWriter(storage, live.state.session_factory, uuid.UUID(project_id))
    with tempfile.TemporaryFile() as file:
        file.write(data)
        file.flush()
        return live.call(writer.store_file(file.fileno(), len(data)))


@dataclass
class SweptAfterPut:
    """The real storage; right after a chunk's upload, another replica's pass runs (the
    race a writer must survive: its object deleted before its row is added)."""

    inner: ObjectStorage
    then: Callable[[], Coroutine[Any, Any, object]]
    name: str = "swept-after-put"
    fired: bool = False

    async def put(self, target: str, chunks: AsyncIterator[bytes], content_type: str) -> None:
        await self.inner.put(target, chunks, content_type)
        if not self.fired:
            self.fired = True
            await self.then()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_replicas_share_what_their_orphan_passes_saw(
    two_instances: tuple[LiveServer, LiveServer],
) -> None:
    first, second = two_instances
    with Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        project_id = admin.project("Orphans")["id"]

    crashed = _put(first, project_id, b"a crash between the upload and the row")
    assert _pass(first, project_id) == 0  # seen once, by the first replica: kept
    assert crashed in chunk_objects(first, project_id)
    assert _suspects(second, project_id) == {crashed: False}
    assert _pass(second, project_id) == 1  # the second replica knows it was seen before
    assert crashed not in chunk_objects(second, project_id)
    assert _suspects(first, project_id) == {crashed: True}  # a tombstone, for a writer

    # A chunk seen without its row, whose row then came: kept by every pass.
    slow = _put(first, project_id, b"uploaded, its row comes later")
    _pass(first, project_id)
    assert _store(second, project_id, b"uploaded, its row comes later", second.state.storage)
    assert _pass(second, project_id) == 0 and _pass(first, project_id) == 0
    assert slow in chunk_objects(first, project_id) and slow in chunk_rows(first, project_id)
    assert slow not in _suspects(first, project_id)

    # A leftover object, seen by a pass; a writer stores the same bytes and, between its
    # upload and its row, the other replica's pass deletes the object: the writer finds
    # the tombstone as it adds its row and stores the bytes again.
    data = b"the same bytes as a leftover"
    raced = _put(first, project_id, data)
    _pass(first, project_id)
    racing = SweptAfterPut(second.state.storage, lambda: _sweep_on(first, project_id))
    [digest] = _store(second, project_id, data, racing)  # type: ignore[arg-type]
    assert digest == raced and racing.fired
    assert raced in chunk_rows(first, project_id)
    assert raced in chunk_objects(first, project_id)  # stored again after the sweep
    assert first.call(_read(first, project_id, raced)) == data
    assert raced not in _suspects(first, project_id)


async def _sweep_on(live: LiveServer, project_id: str) -> int:
    """The other replica's pass, on its own loop (it runs in its own thread)."""
    state = live.state
    assert live.loop is not None
    sweeping = orphans(state.session_factory, state.storage, uuid.UUID(project_id), 0)
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(sweeping, live.loop))


async def _read(live: LiveServer, project_id: str, digest: str) -> bytes:
    parts = [p async for p in live.state.storage.iter_bytes(key(uuid.UUID(project_id), digest))]
    return b"".join(parts)

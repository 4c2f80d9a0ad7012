"""The backend's side of session snapshots: object storage and the workspace's copy.

The worker writes a snapshot of the session's variables into the workspace's snapshot
folder at the end of a run (`app.sandbox.worker.snapshot`). Here its files are stored as one
object, their bytes one after the other, under a new *generation*
(`sessions/<id>/snapshots/<generation>`); the session row records the generation, the
files' names and sizes in that order, and what the snapshot holds; then the previous
generation is deleted. A replica that runs the session next and does not have that
generation in its workspace downloads it, cut back into its files, before the worker
starts; the worker restores it inside its sandbox. The backend only moves bytes: it never
reads what is inside them.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from app.infra.storage import ObjectStorage
from app.models.base import utcnow
from app.observability import metrics
from app.sandbox import SNAPSHOT_DIR, SnapshotReport, hostfs

CONTENT_TYPE = "application/octet-stream"
CHUNK_BYTES = 1 << 20


def prefix(session_id: uuid.UUID) -> str:
    """The storage prefix of a session's snapshots."""
    return f"sessions/{session_id}/snapshots/"


def key(session_id: uuid.UUID, generation: str) -> str:
    return f"{prefix(session_id)}{generation}"


class SnapshotDamaged(ValueError):
    """The stored object does not have the size its record says."""


class SnapshotTooLarge(ValueError):
    """A worker's snapshot is larger than it was allowed to be (it is not stored)."""


async def upload(
    storage: ObjectStorage,
    workspace: Path,
    session_id: uuid.UUID,
    report: SnapshotReport,
    max_bytes: int,
) -> dict[str, Any]:
    """Store the workspace's snapshot as a new generation; the record for the session row.

    Args:
        storage: Where snapshots are kept.
        workspace: The session's workspace (the snapshot's folder is in it).
        session_id: The session.
        report: What the worker says it saved (untrusted: the files are measured here).
        max_bytes: The most the snapshot may take (what the worker was allowed).

    Raises:
        hostfs.UnsafePath: A snapshot file was replaced by a link or a special file.
        SnapshotTooLarge: The files are larger than `max_bytes`.
    """
    generation = uuid.uuid4().hex
    started = time.perf_counter()
    opened: list[tuple[str, hostfs.OpenedFile]] = []
    try:
        for name, _ in report.files:
            relative = f"{SNAPSHOT_DIR}/{name}"
            opened.append((name, await asyncio.to_thread(hostfs.open_regular, workspace, relative)))
        size = sum(file.size for _, file in opened)
        if size > max_bytes:
            raise SnapshotTooLarge(f"the snapshot has {size} bytes, more than its {max_bytes}")
        await storage.put(key(session_id, generation), _concatenated(opened), CONTENT_TYPE)
    finally:
        for _, file in opened:
            os.close(file.fd)
    sizes = dict((name, file.size) for name, file in opened)
    metrics.SNAPSHOT_SECONDS.labels("upload").observe(time.perf_counter() - started)
    metrics.SNAPSHOT_BYTES.labels("upload").observe(sum(sizes.values()))
    record = report.record()
    record["files"] = [{"name": name, "size": sizes[name]} for name, _ in report.files]
    return {
        "generation": generation,
        "saved_at": utcnow().isoformat(),
        "bytes": sum(sizes.values()),
        **record,
    }


async def _concatenated(opened: list[tuple[str, hostfs.OpenedFile]]) -> AsyncIterator[bytes]:
    """The files' bytes one after the other, each exactly the size it had when opened."""
    for _, file in opened:
        left = file.size
        while left:
            chunk = await asyncio.to_thread(os.read, file.fd, min(CHUNK_BYTES, left))
            if not chunk:
                raise SnapshotDamaged("a snapshot file shrank while it was stored")
            left -= len(chunk)
            yield chunk


async def download(
    storage: ObjectStorage,
    workspace: Path,
    marker: Path,
    session_id: uuid.UUID,
    record: dict[str, Any] | None,
) -> None:
    """Bring the session's snapshot into the workspace, unless it is there already.

    Args:
        storage: Where the snapshot is.
        workspace: The session's workspace.
        marker: The file (outside the workspace) naming the generation the workspace holds.
        session_id: The session.
        record: The session row's snapshot record (None: the session has none).

    Raises:
        SnapshotDamaged: The stored object is not as long as its record says.
    """
    if not record:
        return
    generation = str(record["generation"])
    if await asyncio.to_thread(_read, marker) == generation:
        return
    files = list(SnapshotReport.from_record(record).files)
    started = time.perf_counter()
    await asyncio.to_thread(workspace.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(hostfs.remove_tree, workspace, SNAPSHOT_DIR)
    # Written under another name and renamed at the end: a half-downloaded folder is
    # never taken for a snapshot.
    staging = f"{SNAPSHOT_DIR}.incoming"
    await asyncio.to_thread(hostfs.remove_tree, workspace, staging)
    await asyncio.to_thread(hostfs.make_folder, workspace, staging)
    writer = _Splitter(workspace, staging, files)
    try:
        async for chunk in storage.iter_bytes(key(session_id, generation)):
            await asyncio.to_thread(writer.write, chunk)
        await asyncio.to_thread(writer.finish)
    finally:
        await asyncio.to_thread(writer.close)
    await asyncio.to_thread(hostfs.rename, workspace, staging, SNAPSHOT_DIR)
    await asyncio.to_thread(_write, marker, generation)
    metrics.SNAPSHOT_SECONDS.labels("download").observe(time.perf_counter() - started)
    metrics.SNAPSHOT_BYTES.labels("download").observe(sum(size for _, size in files))


class _Splitter:
    """Cuts the stored object back into its files (blocking; call from a thread)."""

    def __init__(self, workspace: Path, folder: str, files: list[tuple[str, int]]):
        self.workspace, self.folder = workspace, folder
        self.pending = list(files)
        self.current: hostfs.IncomingFile | None = None
        self.left = 0
        self._next()

    def _next(self) -> None:
        while self.pending and self.current is None:
            name, size = self.pending.pop(0)
            incoming = hostfs.IncomingFile(self.workspace, name, self.folder).__enter__()
            if size == 0:
                incoming.commit()
                incoming.__exit__(None, None, None)
                continue
            self.current, self.left = incoming, size

    def write(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        while view:
            if self.current is None:
                raise SnapshotDamaged("the stored snapshot is longer than its record says")
            part = view[: self.left]
            self.current.write(bytes(part))
            view, self.left = view[len(part) :], self.left - len(part)
            if not self.left:
                self.current.commit()
                self.current.__exit__(None, None, None)
                self.current = None
                self._next()

    def finish(self) -> None:
        if self.current is not None or self.pending:
            raise SnapshotDamaged("the stored snapshot is shorter than its record says")

    def close(self) -> None:
        if self.current is not None:
            self.current.__exit__(None, None, None)
            self.current = None


async def delete(
    storage: ObjectStorage, session_id: uuid.UUID, generation: str | None = None
) -> None:
    """Delete a session's stored snapshots (or one generation)."""
    if generation is not None:
        await storage.delete(key(session_id, generation))
        return
    for stored in await storage.list_keys(prefix(session_id)):
        await storage.delete(stored)


def remember(marker: Path, generation: str) -> None:
    """Note that the workspace holds this generation (it was just written there)."""
    _write(marker, generation)


def _read(marker: Path) -> str | None:
    try:
        return marker.read_text().strip()
    except OSError:
        return None


def _write(marker: Path, generation: str) -> None:
    marker.parent.mkdir(parents=True, exist_ok=True)
    temporary = marker.with_name(f".{marker.name}.{uuid.uuid4().hex}")
    temporary.write_text(generation)
    os.replace(temporary, marker)

"""The backend's side of session snapshots: object storage and the workspace's copy.

The worker writes a snapshot of the session's variables into the workspace's snapshot
folder at the end of a run (`app.sandbox.worker.snapshot`). Here its files are stored as
content-addressed chunks of the session's project (`app.runs.snapshot_chunks`: what an
earlier snapshot stored already is not stored again), and the *record* lists the files,
their sizes and chunks, and what the snapshot holds (`"format": "chunks"`). The record is
kept as the run's state (`app.runs.run_states`) and as the session's snapshot. A replica
that runs the session next and does not have that generation in its workspace downloads
it, chunk by chunk into its files, before the worker starts; the worker restores it inside
its sandbox. The backend only moves bytes: it never reads what is inside them.

Records written before chunks (one object a generation, `sessions/<id>/snapshots/<gen>`,
the files' bytes one after the other) still download until their session's next run
replaces them; that run deletes the old object.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from typing import Any

from app.infra.storage import ObjectStorage
from app.models.base import utcnow
from app.observability import metrics
from app.runs.snapshot_chunks import ChunkDamaged, ChunkWriter, chunk_sizes, is_chunked, read_file
from app.sandbox import SNAPSHOT_DIR, SnapshotReport, hostfs

CONTENT_TYPE = "application/octet-stream"


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
    report: SnapshotReport,
    max_bytes: int,
    writer: ChunkWriter,
    force: set[str] | None = None,
) -> dict[str, Any]:
    """Store the workspace's snapshot as chunks of the project; the record for it.

    Args:
        storage: Where snapshots are kept.
        workspace: The session's workspace (the snapshot's folder is in it).
        report: What the worker says it saved (untrusted: the files are measured here).
        max_bytes: The most the snapshot may take (what the worker was allowed).
        writer: Stores the chunks (of the session's project); counts what was new.
        force: Chunks to store again even if the project had them (found gone since).

    Raises:
        hostfs.UnsafePath: A snapshot file was replaced by a link or a special file.
        SnapshotTooLarge: The files are larger than `max_bytes`.
    """
    del storage  # the writer has it
    started = time.perf_counter()
    opened: list[tuple[str, hostfs.OpenedFile]] = []
    files: list[dict[str, Any]] = []
    try:
        for name, _ in report.files:
            relative = f"{SNAPSHOT_DIR}/{name}"
            opened.append((name, await asyncio.to_thread(hostfs.open_regular, workspace, relative)))
        size = sum(file.size for _, file in opened)
        if size > max_bytes:
            raise SnapshotTooLarge(f"the snapshot has {size} bytes, more than its {max_bytes}")
        for name, file in opened:
            chunks = await writer.store_file(file.fd, file.size, force=force or ())
            files.append({"name": name, "size": file.size, "chunks": chunks})
    finally:
        for _, file in opened:
            os.close(file.fd)
    total = sum(file["size"] for file in files)
    metrics.SNAPSHOT_SECONDS.labels("upload").observe(time.perf_counter() - started)
    metrics.SNAPSHOT_BYTES.labels("upload").observe(writer.new_bytes)
    record = report.record()
    record["files"] = files
    return {
        "format": "chunks",
        "generation": uuid.uuid4().hex,
        "saved_at": utcnow().isoformat(),
        "bytes": total,
        **record,
    }


async def download(
    storage: ObjectStorage,
    workspace: Path,
    marker: Path,
    session_id: uuid.UUID,
    record: dict[str, Any] | None,
    project_id: uuid.UUID | None = None,
) -> None:
    """Bring the session's snapshot into the workspace, unless it is there already.

    Args:
        storage: Where the snapshot is.
        workspace: The session's workspace.
        marker: The file (outside the workspace) naming the generation the workspace holds.
        session_id: The session (a one-object record is under its key).
        record: The session row's snapshot record (None: the session has none).
        project_id: The session's project (a chunked record's chunks are its).

    Raises:
        SnapshotDamaged: A chunk is missing or damaged, or the stored object is not as long
            as its record says (the workspace is left without a snapshot).
    """
    if not record:
        return
    generation = str(record["generation"])
    if await asyncio.to_thread(_read, marker) == generation:
        return
    files = list(SnapshotReport.from_record(record).files)
    chunked = is_chunked(record)
    if chunked:
        if project_id is None:
            raise SnapshotDamaged("a chunked snapshot needs its project")
        plan = _chunk_plan(record, files)
    started = time.perf_counter()
    await asyncio.to_thread(workspace.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(hostfs.remove_tree, workspace, SNAPSHOT_DIR)
    # Written under another name and renamed at the end: a half-downloaded folder is
    # never taken for a snapshot.
    staging = f"{SNAPSHOT_DIR}.incoming"
    await asyncio.to_thread(hostfs.remove_tree, workspace, staging)
    await asyncio.to_thread(hostfs.make_folder, workspace, staging)
    try:
        if chunked:
            assert project_id is not None
            await _download_chunks(storage, workspace, staging, project_id, plan)
        else:
            await _download_object(storage, workspace, staging, key(session_id, generation), files)
    except (ChunkDamaged, ValueError) as exc:
        await asyncio.to_thread(hostfs.remove_tree, workspace, staging)
        raise SnapshotDamaged(str(exc)) from exc
    await asyncio.to_thread(hostfs.rename, workspace, staging, SNAPSHOT_DIR)
    await asyncio.to_thread(_write, marker, generation)
    metrics.SNAPSHOT_SECONDS.labels("download").observe(time.perf_counter() - started)
    metrics.SNAPSHOT_BYTES.labels("download").observe(sum(size for _, size in files))


def _chunk_plan(
    record: dict[str, Any], files: list[tuple[str, int]]
) -> list[tuple[str, int, list[str]]]:
    """Each file with its chunks, checked: the record came from the database, but its
    digests become storage keys."""
    chunks = {f.get("name"): f.get("chunks") for f in record["files"] if isinstance(f, dict)}
    plan = []
    for name, size in files:
        digests = chunks.get(name)
        if not isinstance(digests, list) or not all(isinstance(d, str) for d in digests):
            raise SnapshotDamaged(f"the record lists no chunks for {name}")
        try:
            chunk_sizes(size, len(digests))
        except ChunkDamaged as exc:
            raise SnapshotDamaged(f"{name}: {exc}") from exc
        plan.append((name, size, digests))
    return plan


async def _download_chunks(
    storage: ObjectStorage,
    workspace: Path,
    folder: str,
    project_id: uuid.UUID,
    plan: list[tuple[str, int, list[str]]],
) -> None:
    for name, size, digests in plan:
        with hostfs.IncomingFile(workspace, name, folder) as incoming:
            await read_file(storage, project_id, name, size, digests, incoming.write)
            await asyncio.to_thread(incoming.commit)


async def _download_object(
    storage: ObjectStorage,
    workspace: Path,
    folder: str,
    stored: str,
    files: list[tuple[str, int]],
) -> None:
    writer = _Splitter(workspace, folder, files)
    try:
        async for chunk in storage.iter_bytes(stored):
            await asyncio.to_thread(writer.write, chunk)
        await asyncio.to_thread(writer.finish)
    finally:
        await asyncio.to_thread(writer.close)


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


def held(marker: Path) -> str | None:
    """The generation the workspace holds, as noted (None: none noted)."""
    return _read(marker)


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

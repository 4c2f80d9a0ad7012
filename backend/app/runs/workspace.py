"""A session's working directory: the project's files under their own names.

Where the sandbox is bubblewrap, the files are given read-only without a copy
(`project_files`). Without it (SANDBOX_ISOLATION=none: nothing could be bound read-only)
they are copied (never linked: the code may overwrite them) and only when they changed,
judged by a manifest of the content hash, size, mtime and inode we left there.
The manifest lives outside the workspace, where sandboxed code cannot reach it, and every
write into the workspace goes through `hostfs`, which never follows a link: the code may
have replaced any name in there with a link to a host file. Files the code wrote stay in
the folder for later runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO

from app.infra.storage import ObjectStorage
from app.models import File
from app.runs import project_files
from app.sandbox import hostfs


def workspace_dir(data_dir: Path, session_id: uuid.UUID) -> Path:
    return (data_dir / "workspaces" / str(session_id)).resolve()


def manifest_path(data_dir: Path, session_id: uuid.UUID) -> Path:
    """Where the backend remembers what it copied into a session's workspace."""
    return (data_dir / "workspace-manifests" / f"{session_id}.json").resolve()


def snapshot_marker_path(data_dir: Path, session_id: uuid.UUID) -> Path:
    """Where the backend notes which snapshot generation the workspace holds."""
    return (data_dir / "workspace-manifests" / f"{session_id}.snapshot").resolve()


def _read_manifest(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_manifest(path: Path, manifest: dict[str, dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    temporary.write_text(json.dumps(manifest))
    os.replace(temporary, path)


def _unchanged(workspace: Path, entry: dict[str, object] | None, file: File) -> bool:
    if entry is None or entry.get("shared") or entry.get("sha256") != file.sha256:
        return False
    info = hostfs.stat_file(workspace, file.name)
    return (
        info is not None
        and info.st_size == entry.get("size")
        and info.st_mtime_ns == entry.get("mtime_ns")
        and info.st_ino == entry.get("inode")
    )


async def materialize(
    storage: ObjectStorage,
    workspace: Path,
    manifest: Path,
    files: list[File],
    shared: Path | None = None,
) -> list[str]:
    """Bring the workspace up to date with the project's files; the names placed now.

    Args:
        storage: Where the files' bytes are.
        workspace: The session's workspace (created if missing).
        manifest: The session's manifest file (outside the workspace).
        files: The project's files.
        shared: Give the files read-only, without a copy, with the storage's local copies
            in this folder (the previews' cache); None: copy them.

    Returns:
        The names that were placed (copied, or linked).
    """
    await asyncio.to_thread(workspace.mkdir, parents=True, exist_ok=True)
    entries = await asyncio.to_thread(_read_manifest, manifest)
    if shared is not None:
        before = dict(entries)
        placed = await project_files.share(storage, shared, workspace, entries, files)
        if entries != before:
            await asyncio.to_thread(_write_manifest, manifest, entries)
        return placed
    copied = []
    for file in files:
        if await asyncio.to_thread(_unchanged, workspace, entries.get(file.name), file):
            continue
        incoming = hostfs.IncomingFile(workspace, file.name)
        await asyncio.to_thread(incoming.__enter__)
        try:
            async for chunk in storage.iter_bytes(file.storage_key):
                await asyncio.to_thread(incoming.write, chunk)
            info = await asyncio.to_thread(incoming.commit)
        finally:
            await asyncio.to_thread(incoming.__exit__, None, None, None)
        entries[file.name] = {
            "sha256": file.sha256,
            "size": info.st_size,
            "mtime_ns": info.st_mtime_ns,
            "inode": info.st_ino,
        }
        copied.append(file.name)
    if copied:
        await asyncio.to_thread(_write_manifest, manifest, entries)
    return copied


async def upload(
    storage: ObjectStorage, workspace: Path, relative: str, key: str, content_type: str
) -> int:
    """Store a file of the workspace (a plain file: never a link's target); its size.

    Raises:
        hostfs.UnsafePath: It is a link, a hard link or not a regular file.
        FileNotFoundError: It is gone.
    """
    opened = await asyncio.to_thread(hostfs.open_regular, workspace, relative)
    with os.fdopen(opened.fd, "rb") as handle:
        await storage.put(key, _chunks(handle), content_type)
    return opened.size


async def _chunks(handle: BinaryIO, size: int = 1024 * 1024) -> AsyncIterator[bytes]:
    while chunk := await asyncio.to_thread(handle.read, size):
        yield chunk

"""A session's working directory: the project's files under their own names.

Files are copied (never linked: sandboxed code may overwrite them) and only when they
changed, judged by a manifest of the content hash and the size and mtime we left there.
Files the code wrote stay in the folder for later runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

from app.infra.storage import ObjectStorage
from app.models import File

BOOKKEEPING = ".workbench"
MANIFEST = "inputs.json"


def workspace_dir(data_dir: Path, session_id: uuid.UUID) -> Path:
    return (data_dir / "workspaces" / str(session_id)).resolve()


def _read_manifest(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _unchanged(target: Path, entry: dict[str, object] | None, file: File) -> bool:
    if entry is None or entry.get("sha256") != file.sha256:
        return False
    try:
        stat = target.stat()
    except FileNotFoundError:
        return False
    return stat.st_size == entry.get("size") and stat.st_mtime_ns == entry.get("mtime_ns")


async def materialize(storage: ObjectStorage, workspace: Path, files: list[File]) -> list[str]:
    """Bring the workspace up to date with the project's files; the names copied now."""
    meta = workspace / BOOKKEEPING
    await asyncio.to_thread(meta.mkdir, parents=True, exist_ok=True)
    manifest_path = meta / MANIFEST
    manifest = await asyncio.to_thread(_read_manifest, manifest_path)
    copied = []
    for file in files:
        target = workspace / file.name
        if await asyncio.to_thread(_unchanged, target, manifest.get(file.name), file):
            continue
        tmp = meta / f".incoming-{uuid.uuid4().hex}"
        try:
            with tmp.open("wb") as out:
                async for chunk in storage.iter_bytes(file.storage_key):
                    await asyncio.to_thread(out.write, chunk)
            await asyncio.to_thread(os.replace, tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        stat = target.stat()
        manifest[file.name] = {
            "sha256": file.sha256,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
        }
        copied.append(file.name)
    if copied:
        await asyncio.to_thread(manifest_path.write_text, json.dumps(manifest))
    return copied

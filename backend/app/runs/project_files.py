"""The project's files as a session's sandbox sees them: read-only, shared, never copied.

A file's bytes are on the host once, found by content hash: the local storage's own file,
or the previews' copy of an S3 object (fetched once, `ObjectStorage.local_copy`), or, when
that lies on another filesystem than the workspaces (docker compose: another volume), one
copy in the workspaces' CACHE_FOLDER named by the hash. A session is given them as hard
links in its folder of project files (`layout.files_view`, outside its workspace), which its
sandbox binds read-only at FILES_INSIDE; its workspace holds, under each file's plain name,
a symbolic link there. So a 5 GB file is ready in a question at once, ten sessions on it
take no more disk than one, and none of them can change the bytes the others read: the
mount is read-only (no write, truncate, chmod, rename or delete), a hard link out of it
crosses mounts, and only the host writes the folder. The code may still replace the link
in its workspace with a file of its own; the next question puts the project's file back.

The folder is bound when the worker starts and shows what is put in it later: a worker
kept between questions sees a new version at once.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import uuid
import weakref
from pathlib import Path

from app.infra.storage import ObjectStorage
from app.models import File
from app.sandbox import hostfs
from app.sandbox.layout import FILES_INSIDE, files_view

# In the folder of the workspaces: the copies made where a hard link could not be.
CACHE_FOLDER = ".cache"
# A hard link fails with these where a copy does not (another filesystem, no hard links
# allowed there, the inode's link count full).
NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP}

Entries = dict[str, dict[str, object]]

# A lock per object being fetched (see share).
_fetching: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def link_for(name: str) -> str:
    """The link a workspace holds for a project file: into FILES_INSIDE."""
    return f"{FILES_INSIDE}/{name}"


async def share(
    storage: ObjectStorage, copies: Path, workspace: Path, entries: Entries, files: list[File]
) -> list[str]:
    """Give the workspace the project's files (read-only, no copy); the names given now.

    Args:
        storage: Where the files' bytes are.
        copies: Where the storage keeps local copies of objects (the previews' cache).
        workspace: The session's workspace (it exists).
        entries: The workspace's manifest, updated in place.
        files: The project's files.

    Returns:
        The names that were (re)placed.
    """
    view = files_view(workspace)
    await asyncio.to_thread(view.mkdir, parents=True, exist_ok=True)
    placed = []
    for file in files:
        entry = entries.get(file.name)
        if await asyncio.to_thread(_in_place, workspace, entry, file):
            continue
        fallback = workspace.parent / CACHE_FOLDER / file.sha256
        # One fetch and one copy of an object at a time: a second session waits for them.
        async with _fetching.setdefault(file.sha256, asyncio.Lock()):
            source = await storage.local_copy(file.storage_key, copies, file.sha256)
            inode = await asyncio.to_thread(_link, source, fallback, view, file.name)
        await asyncio.to_thread(hostfs.place_link, workspace, file.name, link_for(file.name))
        entries[file.name] = {"sha256": file.sha256, "shared": True, "inode": inode}
        placed.append(file.name)
    names = {file.name for file in files}
    for name in [n for n, e in entries.items() if e.get("shared") and n not in names]:
        await asyncio.to_thread(_take_back, workspace, name)
        del entries[name]
    return placed


def _in_place(workspace: Path, entry: dict[str, object] | None, file: File) -> bool:
    """Whether the workspace has this version of the file, and its link to it."""
    if entry is None or not entry.get("shared") or entry.get("sha256") != file.sha256:
        return False
    try:
        info = (files_view(workspace) / file.name).lstat()
    except OSError:
        return False
    linked = hostfs.link_target(workspace, file.name) == link_for(file.name)
    return linked and info.st_ino == entry.get("inode")


def _link(source: Path, fallback: Path, view: Path, name: str) -> int:
    """Put a hard link to the bytes at `view/name` (replacing what was there); its inode.

    Where `source` cannot be linked from the view's filesystem, `fallback` (on that
    filesystem) is made once as a copy of it and linked instead.
    """
    temporary = view / f".incoming-{uuid.uuid4().hex}"
    try:
        os.link(source, temporary)
    except OSError as exc:
        if exc.errno not in NO_LINK:
            raise
        if not fallback.exists():
            _copy(source, fallback)
        os.link(fallback, temporary)
    try:
        os.replace(temporary, view / name)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return (view / name).lstat().st_ino


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.part")
    try:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _take_back(workspace: Path, name: str) -> None:
    """A file gone from the project: out of the session's files, and its link with it
    (unless the code put something of its own under the name)."""
    (files_view(workspace) / name).unlink(missing_ok=True)
    if hostfs.link_target(workspace, name) == link_for(name):
        hostfs.remove(workspace, name)


def forget(workspace: Path) -> None:
    """Remove the workspace's folder of project files (the session is gone)."""
    shutil.rmtree(files_view(workspace), ignore_errors=True)


def hand_over(source: Path, target: Path) -> None:
    """A spare worker's workspace becomes a session's (`SandboxPool._take_spare`): the
    session's project files move into the spare's folder of them, which its sandbox has
    bound, and that folder takes the session's name."""
    spare, session = files_view(source), files_view(target)
    spare.mkdir(parents=True, exist_ok=True)
    if session.is_dir() and not session.is_symlink():
        hostfs.move_entries(session, spare)
        session.rmdir()
    os.rename(spare, session)

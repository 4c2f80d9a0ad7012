"""Each attempt's own folder (and so its own sandbox worker): forked from the session's.

An attempt works in a *space*: a folder under DATA_DIR/workspaces named by an id made
from the run and the attempt's number, which the sandbox pool treats like a session (a
slot of its own, queued fairly with everyone's). The space starts with the files the
session's earlier code wrote (copied) and the project's files (as for any run); the
session's variables come from its snapshot, restored by the space's new worker. What an
attempt writes stays in its space until it is chosen; then its files are copied into the
session's folder, and every space is removed.

Every walk here goes through `hostfs` (descriptors, no link followed): the code of each
attempt, and of the session before, controls these folders.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from app.sandbox import hostfs

# Files larger than this are not copied between folders (the session's own big outputs
# stay readable to the attempts only through the project's files).
COPY_FILE_LIMIT = 1 << 30
# Folders deeper than this are not copied (the code may have made a tree of any depth).
COPY_DEPTH = 32


def space_id(run_id: uuid.UUID, attempt: int) -> uuid.UUID:
    """The id of an attempt's space (stable: any replica finds the same)."""
    return uuid.uuid5(run_id, f"attempt-{attempt}")


def copy_files(source: Path, target: Path, skip: frozenset[str]) -> int:
    """Copy the plain files (and folders) of one workspace into another; how many files.

    Links, special files, files with other hard links and top-level names starting with
    "." (the sandbox's bookkeeping, its snapshot) or in `skip` (the project's files, which
    every run is given anew) are left out. Files of the target with a copied name are
    replaced (by rename: never written through a link).
    """
    if not source.is_dir():
        return 0
    target.mkdir(parents=True, exist_ok=True)
    return _copy_folder(source, target, "", skip)


def _copy_folder(source: Path, target: Path, relative: str, skip: frozenset[str]) -> int:
    copied = 0
    try:
        with hostfs.open_folder(source, relative) as folder:
            entries = [(e.name, e.stat(follow_symlinks=False)) for e in os.scandir(folder)]
    except (hostfs.UnsafePath, FileNotFoundError, NotADirectoryError):
        return 0
    depth = relative.count("/") + 1 if relative else 0
    for name, info in entries:
        if not relative and (name.startswith(".") or name in skip):
            continue
        path = f"{relative}/{name}" if relative else name
        if stat.S_ISDIR(info.st_mode) and depth < COPY_DEPTH:
            try:
                hostfs.make_folder(target, path)
            except (hostfs.UnsafePath, OSError):
                continue
            copied += _copy_folder(source, target, path, skip)
        elif stat.S_ISREG(info.st_mode) and info.st_size <= COPY_FILE_LIMIT:
            copied += _copy_file(source, target, relative, name)
    return copied


def _copy_file(source: Path, target: Path, folder: str, name: str) -> int:
    path = f"{folder}/{name}" if folder else name
    try:
        opened = hostfs.open_regular(source, path)
    except (hostfs.UnsafePath, FileNotFoundError):
        return 0
    try:
        with hostfs.IncomingFile(target, name, folder) as incoming:
            while chunk := os.read(opened.fd, 1 << 20):
                incoming.write(chunk)
            incoming.commit()
    except (hostfs.UnsafePath, OSError):
        return 0
    finally:
        os.close(opened.fd)
    return 1

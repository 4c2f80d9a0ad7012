"""A worker started from a state: a new folder given a workspace's files and variables.

What an attempt's space (app.attempts) and a repair strategy's folder
(app.runs.repair_workers) both start from: the files the session's code wrote, copied, and
its variables' snapshot, copied beside them, which a new worker there restores as it
starts. The method is a snapshot restore, not a fork of the running process: each new
worker is a worker like any other (its own folder, namespaces and system-call filter), and
what it gets are copies (never links: a write in place cannot reach the source).

Every walk goes through `hostfs` (descriptors, no link followed): the code controls these
folders. Links, FIFOs, sockets, devices and files with other hard links are left out;
bytes are copied by the kernel (copy_file_range) where it can.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from app.observability import metrics
from app.runs import snapshots
from app.runs.workspace import snapshot_marker_path, workspace_dir
from app.sandbox import SNAPSHOT_DIR, SandboxWorker, SnapshotReport, hostfs
from app.sandbox.layout import BOOKKEEPING_DIR

log = logging.getLogger(__name__)
# Files larger than this are not copied between folders (the session's own big outputs
# stay readable only through the project's files).
COPY_FILE_LIMIT = 1 << 30
# Folders deeper than this are not copied (the code may have made a tree of any depth).
COPY_DEPTH = 32


def copy_files(
    source: Path, target: Path, skip: frozenset[str] = frozenset(), links: bool = False
) -> int:
    """Copy the plain files (and folders) of one workspace into another; how many files.

    Top-level names starting with "." (the sandbox's bookkeeping, its snapshot, the DuckDB
    spill folder) or in `skip` (the project's files, which every run is given anew) are
    left out. Files of the target with a copied name are replaced (by rename: never
    written through a link).

    Args:
        links: Make symbolic links again as links (what they point to is never read: a
            sandbox resolves them in its own view, where the project's files are links);
            else they are left out.
    """
    if not source.is_dir():
        return 0
    target.mkdir(parents=True, exist_ok=True)
    return _copy_folder(source, target, "", skip, links)


def copy_snapshot(source: Path, target: Path, record: dict[str, Any] | None = None) -> bool:
    """Copy a workspace's snapshot of its variables into another workspace (replacing any
    there); whether a whole one was copied.

    Args:
        record: The snapshot the source should hold: its files must have the sizes the
            record says, else nothing is copied (and False returned).
    """
    staging = f"{SNAPSHOT_DIR}.incoming"
    try:
        expected = dict(SnapshotReport.from_record(record).files) if record else None
    except (ValueError, KeyError, TypeError):  # not a record a worker could have made
        return False
    found = _plain_sizes(source, SNAPSHOT_DIR)
    if found is None:
        return False
    sizes = {name: size for name, size in found.items() if size is not None}
    if expected is not None and any(sizes.get(n) != size for n, size in expected.items()):
        return False
    target.mkdir(parents=True, exist_ok=True)
    hostfs.make_folder(target, BOOKKEEPING_DIR)
    hostfs.remove_tree(target, staging)
    hostfs.make_folder(target, staging)
    try:
        for name in expected or sizes:
            if not _copy_file(source, target, SNAPSHOT_DIR, name, staging):
                hostfs.remove_tree(target, staging)
                return False
        hostfs.remove_tree(target, SNAPSHOT_DIR)
        hostfs.rename(target, staging, SNAPSHOT_DIR)
    except BaseException:
        hostfs.remove_tree(target, staging)
        raise
    return True


def move_snapshot(source: Path, target: Path, record: dict[str, Any]) -> bool:
    """Move a workspace's snapshot into another workspace (replacing any there), as the
    record says it is; whether it was moved whole (else the target has none of it).

    Moved first (out of the source's reach: a rename between the two folders' descriptors,
    no link followed), then checked where it landed: exactly the record's files, each a
    regular file with no other hard link and the size the record says. Blocking.
    """
    staging = f"{SNAPSHOT_DIR}.incoming"
    try:
        expected = dict(SnapshotReport.from_record(record).files)
    except (ValueError, KeyError, TypeError):
        return False
    target.mkdir(parents=True, exist_ok=True)
    hostfs.make_folder(target, BOOKKEEPING_DIR)
    hostfs.remove_tree(target, staging)
    parent, name = os.path.split(SNAPSHOT_DIR)
    try:
        with (
            hostfs.open_folder(source, parent) as source_fd,
            hostfs.open_folder(target, parent) as target_fd,
        ):
            if not stat.S_ISDIR(os.stat(name, dir_fd=source_fd, follow_symlinks=False).st_mode):
                return False
            os.rename(name, os.path.basename(staging), src_dir_fd=source_fd, dst_dir_fd=target_fd)
    except (hostfs.UnsafePath, OSError):
        return False
    if _plain_sizes(target, staging) != expected:
        hostfs.remove_tree(target, staging)
        return False
    hostfs.remove_tree(target, SNAPSHOT_DIR)
    hostfs.rename(target, staging, SNAPSHOT_DIR)
    return True


def _plain_sizes(workspace: Path, folder: str) -> dict[str, int | None] | None:
    """Each entry of the folder with its size, None for one that is not a regular file with
    no other hard link (a link, a folder, a file linked elsewhere); None when the folder
    cannot be opened (missing, or itself a link)."""
    try:
        with hostfs.open_folder(workspace, folder) as opened:
            entries = [(e.name, e.stat(follow_symlinks=False)) for e in os.scandir(opened)]
    except (hostfs.UnsafePath, OSError):
        return None
    return {
        name: info.st_size if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 else None
        for name, info in entries
    }


def seed_space(
    data_dir: Path, session_id: uuid.UUID, space: uuid.UUID, snapshot: dict[str, Any] | None
) -> bool:
    """Give an attempt's space the session's snapshot from the session's workspace on this
    replica, when that holds the same generation (a local copy, not a download); whether
    it did (else the caller fetches it from storage). Blocking."""
    if not snapshot:
        return False
    generation = str(snapshot["generation"])
    if snapshots.held(snapshot_marker_path(data_dir, session_id)) != generation:
        return False
    started = time.perf_counter()
    try:
        copied = copy_snapshot(
            workspace_dir(data_dir, session_id), workspace_dir(data_dir, space), snapshot
        )
    except OSError:
        log.exception("could not copy the snapshot of session %s", session_id)
        return False
    if copied:
        snapshots.remember(snapshot_marker_path(data_dir, space), generation)
        metrics.SNAPSHOT_SECONDS.labels("copy").observe(time.perf_counter() - started)
    return copied


def start_all(workers: Sequence[SandboxWorker]) -> list[BaseException | None]:
    """Start the workers at once (each restores its folder's snapshot); each one's error.
    Blocking."""
    if not workers:
        return []
    with ThreadPoolExecutor(len(workers)) as starting:
        return list(starting.map(_start, workers))


def _start(worker: SandboxWorker) -> BaseException | None:
    try:
        worker.start()
    except Exception as exc:
        return exc
    return None


def _copy_folder(
    source: Path, target: Path, relative: str, skip: frozenset[str], links: bool
) -> int:
    copied = 0
    pointing: dict[str, str] = {}
    try:
        with hostfs.open_folder(source, relative) as folder:
            entries = [(e.name, e.stat(follow_symlinks=False)) for e in os.scandir(folder)]
            for name, info in entries if links else []:
                if stat.S_ISLNK(info.st_mode):
                    with contextlib.suppress(OSError):
                        pointing[name] = os.readlink(name, dir_fd=folder)
    except (hostfs.UnsafePath, FileNotFoundError, NotADirectoryError):
        return 0
    if pointing:
        copied += _make_links(target, relative, pointing, skip)
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
            copied += _copy_folder(source, target, path, skip, links)
        elif stat.S_ISREG(info.st_mode) and info.st_size <= COPY_FILE_LIMIT:
            copied += _copy_file(source, target, relative, name)
    return copied


def _make_links(target: Path, relative: str, pointing: dict[str, str], skip: frozenset[str]) -> int:
    made = 0
    try:
        with hostfs.open_folder(target, relative) as folder:
            for name, points_to in pointing.items():
                if relative or not (name.startswith(".") or name in skip):
                    with contextlib.suppress(OSError):
                        os.symlink(points_to, name, dir_fd=folder)
                        made += 1
    except (hostfs.UnsafePath, OSError):
        return made
    return made


def _copy_file(source: Path, target: Path, folder: str, name: str, into: str | None = None) -> int:
    """Copy one regular file (`hostfs.open_regular`: not one with other hard links) from
    `folder` of the source to `into` (by default the same folder) of the target; 1 if
    copied, else 0."""
    path = f"{folder}/{name}" if folder else name
    try:
        opened = hostfs.open_regular(source, path)
    except (hostfs.UnsafePath, FileNotFoundError):
        return 0
    try:
        with hostfs.IncomingFile(target, name, folder if into is None else into) as incoming:
            incoming.fill_from(opened.fd)
            incoming.commit()
    except (hostfs.UnsafePath, OSError):
        return 0
    finally:
        os.close(opened.fd)
    return 1

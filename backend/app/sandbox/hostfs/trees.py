"""Whole trees of a workspace: measuring, removing, and removing what a step wrote, one
descriptor per level and never a path (see the package)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from app.sandbox.hostfs.paths import DIR_FLAGS, UnsafePath, folder_fd, relative_parts


def remove_tree(workspace: Path, relative: str = "") -> None:
    """Delete a folder and everything in it (or a file or link of that name), following no
    link: what the code planted in there is removed, never what a link points to.

    The walk holds descriptors, never paths, so it removes trees of any depth (past
    PATH_MAX and any recursion limit), folders the code made unreadable, FIFOs and sockets.

    Args:
        workspace: The workspace root.
        relative: The folder below it to delete; "" deletes the workspace itself.

    Raises:
        OSError: Something in the tree could not be removed (what could be is gone).
    """
    if relative:
        *folders, name = relative_parts(relative)
        try:
            parent = folder_fd(workspace, "/".join(folders))
        except (FileNotFoundError, UnsafePath):
            return
    else:
        name = workspace.name
        opened = _open_base(workspace.parent)
        if opened is None:
            return
        parent = opened
    try:
        _remove_entry(parent, name)
    finally:
        os.close(parent)


@dataclass
class Usage:
    """What a workspace holds: each inode once, links not followed.

    Attributes:
        bytes: What the quota charges: a regular file the larger of its allocated and its
            apparent size (a sparse file costs its whole size once copied or uploaded), any
            other inode (folders included) its allocated blocks.
        files: Entries found.
        complete: False when part of the tree could not be measured (a folder the host
            may not open, or one moved while the walk was in it).
    """

    bytes: int = 0
    files: int = 0
    complete: bool = True


# Descriptors one walk keeps open, whatever the depth of the tree.
MAX_OPEN_FOLDERS = 64
# The longest file_clock_ns waits for the file system's clock to move (a tick is 1 to 10 ms).
CLOCK_TICK_WAIT_SECONDS = 0.1
# How often a removal starts again after the tree changed under it (or refilled a folder).
MAX_REMOVE_ATTEMPTS = 8

_PATH_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_T = TypeVar("_T")


class TreeChanged(OSError):
    """A folder the walk had left was no longer where the walk came down from."""


def _charge(info: os.stat_result) -> int:
    allocated = info.st_blocks * 512
    return max(allocated, info.st_size) if stat.S_ISREG(info.st_mode) else allocated


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _open_subfolder(parent: int, name: str) -> int:
    """Open a folder below `parent` by name, never through a link. One the code made
    unreadable gets its owner's rwx back first (the host runs as that owner or as root)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except PermissionError:
        pass
    handle = os.open(name, _PATH_FLAGS, dir_fd=parent)
    try:
        mode = stat.S_IMODE(os.fstat(handle).st_mode)
        # fchmod refuses O_PATH descriptors; the descriptor's /proc link is the very
        # folder opened, never a link the code may have put in place of its name since.
        link = f"/proc/self/fd/{handle}"
        os.chmod(link, mode | 0o700)
        return os.open(link, DIR_FLAGS & ~os.O_NOFOLLOW)
    finally:
        os.close(handle)


@dataclass
class _Level:
    """A folder on the walk's way down from its base."""

    name: str  # in the folder above
    found: os.stat_result  # as first seen, before the walk changed its mode
    ident: tuple[int, int]
    fd: int  # -1 while closed
    subfolders: list[tuple[str, os.stat_result]] = field(default_factory=list)
    scanned: bool = False
    granted: bool = False
    refills: int = 0


class _FolderWalk:
    """A depth-first walk down a folder tree by descriptors, for trees of any depth.

    Each folder is opened by name relative to the one above with O_NOFOLLOW: no path is
    ever spelled (none grows past PATH_MAX), no link is followed, and nothing recurses.
    Only the MAX_OPEN_FOLDERS deepest folders and the base stay open; a closed one is
    opened again, on the way up, as ".." of the one below, and used only if it is the same
    folder (device and inode) as on the way down; else `TreeChanged`. A folder whose mode
    refuses what the walk must do in it gets its owner's rwx back (and keeps them).
    """

    def __init__(self, base: int) -> None:
        """Start at `base`, an open folder (the caller's, left open)."""
        info = os.fstat(base)
        self.levels = [_Level("", info, _identity(info), base)]
        self._first_open = 1  # levels[1:_first_open] are closed

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    @property
    def top(self) -> _Level:
        return self.levels[-1]

    def close(self) -> None:
        for level in self.levels[1:]:
            if level.fd >= 0:
                os.close(level.fd)
                level.fd = -1
        del self.levels[1:]

    def granted(self, level: _Level, action: Callable[[], _T]) -> _T:
        """Do `action` in `level`; refused, once more after giving the owner rwx there."""
        try:
            return action()
        except PermissionError:
            if level.granted:
                raise
            level.granted = True
            os.fchmod(level.fd, stat.S_IMODE(os.fstat(level.fd).st_mode) | 0o700)
            return action()

    def entries(self) -> Iterator[tuple[str, os.stat_result]]:
        """The deepest folder's entries with their lstat (those gone meanwhile left out)."""
        level = self.top
        with os.scandir(level.fd) as listing:
            for entry in listing:
                name = entry.name
                try:
                    lstat = partial(os.stat, name, dir_fd=level.fd, follow_symlinks=False)
                    info = self.granted(level, lstat)
                except FileNotFoundError:
                    continue
                yield name, info

    def unlink(self, name: str) -> None:
        level = self.top
        self.granted(level, partial(os.unlink, name, dir_fd=level.fd))

    def rmdir(self, name: str) -> None:
        level = self.top
        self.granted(level, partial(os.rmdir, name, dir_fd=level.fd))

    def descend(self, name: str, found: os.stat_result | None = None) -> bool:
        """Enter a folder of the deepest one; False when it is gone or not a folder now."""
        parent = self.top
        try:
            fd = self.granted(parent, partial(_open_subfolder, parent.fd, name))
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link now: never followed
                return False
            raise
        info = os.fstat(fd)
        self.levels.append(_Level(name, found or info, _identity(info), fd))
        if self.depth - self._first_open + 1 > MAX_OPEN_FOLDERS:
            far = self.levels[self._first_open]
            os.close(far.fd)
            far.fd = -1
            self._first_open += 1
        return True

    def ascend(self) -> _Level:
        """Leave the deepest folder (its descriptor closed); the one above is open."""
        level = self.levels.pop()
        parent = self.top
        try:
            if parent.fd < 0:
                fd = os.open("..", DIR_FLAGS, dir_fd=level.fd)
                if _identity(os.fstat(fd)) != parent.ident:
                    os.close(fd)
                    raise TreeChanged(f"the folder above {level.name!r} was moved")
                parent.fd = fd
                self._first_open = self.depth
        finally:
            os.close(level.fd)
            level.fd = -1
        return level


def _open_base(folder: Path) -> int | None:
    """The folder holding a workspace (the backend's own path, trusted); None if gone."""
    try:
        return os.open(folder, DIR_FLAGS & ~os.O_NOFOLLOW)
    except FileNotFoundError:
        return None


def usage(workspace: Path, stop_above: int | None = None) -> Usage:
    """Disk use of a workspace, every inode counted once, links not followed.

    Args:
        workspace: The workspace root.
        stop_above: Stop counting once this many bytes are passed (it is over quota). A
            tree that cannot be measured whole counts as past it: what it hides is unknown.

    Returns:
        The usage found (a lower bound when the count stopped early).
    """
    found = Usage()
    base = _open_base(workspace.parent)
    if base is None:
        return found
    walk = _FolderWalk(base)
    linked: set[tuple[int, int]] = set()  # inodes with several names, counted once
    try:
        if not walk.descend(workspace.name):
            return found
        while walk.depth:
            level = walk.top
            if not level.scanned:
                level.scanned = True
                for name, info in walk.entries():
                    if stat.S_ISDIR(info.st_mode):
                        level.subfolders.append((name, info))
                    elif info.st_nlink > 1:
                        if _identity(info) in linked:
                            continue
                        linked.add(_identity(info))
                    found.files += 1
                    found.bytes += _charge(info)
                    if stop_above is not None and found.bytes > stop_above:
                        return found
            if level.subfolders:
                walk.descend(*level.subfolders.pop())
            else:
                walk.ascend()
    except (PermissionError, TreeChanged):
        found.complete = False
        if stop_above is not None:
            found.bytes = max(found.bytes, stop_above + 1)
    finally:
        walk.close()
        os.close(base)
    return found


def _remove_entry(parent: int, name: str) -> None:
    """Remove `name` in the open folder `parent`, a whole tree if it is a folder."""
    for _ in range(MAX_REMOVE_ATTEMPTS):
        try:
            _remove_once(parent, name)
            return
        except TreeChanged:
            continue
    raise TreeChanged(f"{name!r} kept changing while it was removed")


def _remove_once(base: int, name: str) -> None:
    walk = _FolderWalk(base)
    try:
        try:
            info = os.stat(name, dir_fd=base, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(info.st_mode):
            walk.unlink(name)
            return
        if not walk.descend(name, info):
            return
        while walk.depth:
            level = walk.top
            if not level.scanned:
                level.scanned = True
                for entry, info in walk.entries():
                    if stat.S_ISDIR(info.st_mode):
                        level.subfolders.append((entry, info))
                    else:
                        with suppress(FileNotFoundError):
                            walk.unlink(entry)
            if level.subfolders:
                walk.descend(*level.subfolders.pop())
                continue
            done = walk.ascend()
            try:
                walk.rmdir(done.name)
            except FileNotFoundError:
                pass
            except OSError as exc:
                # Filled again meanwhile (a worker not quite gone): scan the one above anew.
                parent = walk.top
                if exc.errno != errno.ENOTEMPTY or parent.refills >= MAX_REMOVE_ATTEMPTS:
                    raise
                parent.refills += 1
                parent.scanned = False
                parent.subfolders.clear()
    finally:
        walk.close()


def file_clock_ns(folder: Path) -> int:
    """Now, as the file system in `folder` stamps files: a file written before this call is
    always older, and a file written after it is never older.

    The file system's clock can be coarse (a kernel tick) and can lag time.time_ns(), so
    the moment is read off files made there: the stamp of a second file, made once the
    clock has moved past the first one's (at once where stamps are fine-grained, within a
    tick where they are not). A file written just before the call carries at most the
    first stamp, so it never counts as written after.

    Args:
        folder: A folder on the file system to ask (only the backend writes there).

    Returns:
        The modification time, in ns, of a file made (and removed) there just now.
    """
    first = _stamp(folder)
    gives_up = time.monotonic() + CLOCK_TICK_WAIT_SECONDS
    while (now := _stamp(folder)) <= first and time.monotonic() < gives_up:
        time.sleep(0.0005)
    return now


def _stamp(folder: Path) -> int:
    fd, name = tempfile.mkstemp(prefix=".clock-", dir=folder)
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
        os.unlink(name)


def remove_newer_than(workspace: Path, since_ns: int) -> int:
    """Delete what was written at or after a moment (what an over-quota step wrote): every
    file, link or special file changed since, then every folder changed since that is left
    empty (a tree of empty folders takes disk too). Folders that were there before stay
    unless they were left empty; the workspace itself always stays.

    Args:
        workspace: The workspace root.
        since_ns: When the step started, as `file_clock_ns` tells it.

    Returns:
        The number of bytes freed (as `usage` charges them).
    """

    def new(info: os.stat_result) -> bool:
        return info.st_mtime_ns >= since_ns or info.st_ctime_ns >= since_ns

    freed = 0
    base = _open_base(workspace.parent)
    if base is None:
        return 0
    walk = _FolderWalk(base)
    try:
        if not walk.descend(workspace.name):
            return 0
        while walk.depth:
            level = walk.top
            if not level.scanned:
                level.scanned = True
                for name, info in walk.entries():
                    if stat.S_ISDIR(info.st_mode):
                        level.subfolders.append((name, info))
                    elif new(info):
                        try:
                            walk.unlink(name)
                            freed += _charge(info)
                        except OSError:
                            continue
            if level.subfolders:
                try:
                    walk.descend(*level.subfolders.pop())
                except PermissionError:
                    continue  # a folder the host may not open: what it holds stays
                continue
            done = walk.ascend()
            if walk.depth and new(done.found):
                try:
                    walk.rmdir(done.name)
                    freed += _charge(done.found)
                except OSError:
                    continue  # it holds what was there before
    except TreeChanged:
        pass  # moved by a worker not quite gone: what was reached is removed
    finally:
        walk.close()
        os.close(base)
    return freed

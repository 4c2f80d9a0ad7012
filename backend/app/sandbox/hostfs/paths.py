"""One entry of a workspace at a time: open, make, rename, remove, write a file in, all
from a descriptor of the workspace down with O_NOFOLLOW (see the package)."""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(PermissionError):
    """A path leads through a link, out of the workspace, or to something not a plain file."""


def relative_parts(relative: str) -> list[str]:
    path = PurePosixPath(relative)
    if path.is_absolute() or not path.parts or any(p in ("..", ".", "") for p in path.parts):
        raise UnsafePath(f"not a plain relative path: {relative!r}")
    return list(path.parts)


@contextmanager
def open_folder(workspace: Path, relative: str = "") -> Iterator[int]:
    """A descriptor of a folder inside the workspace, reached without following links.

    Args:
        workspace: The workspace root (the backend's own path to it).
        relative: A folder below it ("" for the root).

    Yields:
        The folder's descriptor (closed afterwards).

    Raises:
        UnsafePath: A component is a link or not a folder.
    """
    fd = folder_fd(workspace, relative)
    try:
        yield fd
    finally:
        os.close(fd)


def folder_fd(workspace: Path, relative: str, create: bool = False) -> int:
    fd = os.open(workspace, DIR_FLAGS)
    try:
        for part in relative_parts(relative) if relative else []:
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if isinstance(exc, FileNotFoundError):
                    raise
                raise UnsafePath(f"{relative!r} is not a plain folder: {exc}") from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_folder(workspace: Path, relative: str) -> None:
    """Create a folder and its parents inside the workspace, never through a link.

    Raises:
        UnsafePath: A component exists and is a link or not a folder.
    """
    os.close(folder_fd(workspace, relative, create=True))


@dataclass(frozen=True)
class OpenedFile:
    """A regular file opened for reading; `fd` belongs to the caller."""

    fd: int
    size: int


def open_regular(workspace: Path, relative: str) -> OpenedFile:
    """Open a file the sandbox reported, refusing links, hard links and special files.

    Args:
        workspace: The workspace root.
        relative: The file's path below it.

    Returns:
        The open file.

    Raises:
        UnsafePath: It is a symlink, has other hard links, or is not a regular file.
        FileNotFoundError: It is gone.
    """
    *folders, name = relative_parts(relative)
    with open_folder(workspace, "/".join(folders)) as parent:
        try:
            # O_NONBLOCK: opening a FIFO the code left there must not hang the backend.
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = os.open(name, flags, dir_fd=parent)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise UnsafePath(f"{relative!r} cannot be opened safely: {exc}") from exc
    info = os.fstat(fd)
    # A hard link to a host file is a regular file too: only a file with one name is ours.
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise UnsafePath(f"{relative!r} is not a plain file of the workspace")
    os.set_blocking(fd, True)
    return OpenedFile(fd, info.st_size)


def remove(workspace: Path, relative: str) -> None:
    """Delete a file (or a link itself) inside the workspace, without following links.

    Args:
        workspace: The workspace root.
        relative: The path below it.
    """
    *folders, name = relative_parts(relative)
    try:
        with open_folder(workspace, "/".join(folders)) as parent:
            os.unlink(name, dir_fd=parent)
    except (FileNotFoundError, UnsafePath, IsADirectoryError):
        pass


def rename(workspace: Path, source: str, target: str) -> None:
    """Rename an entry inside the workspace; neither path is followed through a link."""
    *source_folders, source_name = relative_parts(source)
    *target_folders, target_name = relative_parts(target)
    with (
        open_folder(workspace, "/".join(source_folders)) as source_parent,
        open_folder(workspace, "/".join(target_folders)) as target_parent,
    ):
        os.rename(source_name, target_name, src_dir_fd=source_parent, dst_dir_fd=target_parent)


def move_entries(source: Path, target: Path) -> int:
    """Move every entry of one workspace folder into another; how many moved.

    Each entry is renamed by name between descriptors of the two folders: a link moves as
    the link itself, never what it points to. Both folders must be on one filesystem; an
    entry of the target with a name from the source is replaced.

    Raises:
        UnsafePath: The source or the target is a link.
    """
    with open_folder(source) as source_fd, open_folder(target) as target_fd:
        names = os.listdir(source_fd)
        for name in names:
            os.rename(name, name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
    return len(names)


class IncomingFile:
    """A file being written into a workspace folder, put in place by commit().

    The bytes go to a new file with a random name (O_EXCL: never an existing link), which
    commit() renames over the target; a rename replaces a link rather than following it.
    Not committed, it is removed. Use as a context manager; its methods block.
    """

    def __init__(self, workspace: Path, name: str, folder: str = "") -> None:
        """Prepare to write `name`.

        Args:
            workspace: The workspace root.
            name: A plain file name (no folder part).
            folder: The folder below the root to write it in ("" for the root).
        """
        if relative_parts(name) != [name]:
            raise UnsafePath(f"not a plain file name: {name!r}")
        self.workspace = workspace
        self.folder = folder
        self.name = name
        self._temporary = f".incoming-{uuid.uuid4().hex}"
        self._folder = -1
        self._fd = -1

    def __enter__(self) -> IncomingFile:
        self._folder = folder_fd(self.workspace, self.folder)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            self._fd = os.open(self._temporary, flags, 0o644, dir_fd=self._folder)
        except BaseException:
            os.close(self._folder)
            raise
        return self

    def write(self, chunk: bytes) -> None:
        """Append bytes."""
        view = memoryview(chunk)
        while view:
            view = view[os.write(self._fd, view) :]

    def fill_from(self, source: int) -> None:
        """Append everything left in an open file, copied by the kernel where it can."""
        while True:
            try:
                copied = os.copy_file_range(source, self._fd, 1 << 30)
            except OSError:  # across file systems on older kernels, or not supported
                while chunk := os.read(source, 1 << 20):
                    self.write(chunk)
                return
            if not copied:
                return

    def commit(self) -> os.stat_result:
        """Put the file in place; returns its stat."""
        info = os.fstat(self._fd)
        os.close(self._fd)
        self._fd = -1
        os.rename(self._temporary, self.name, src_dir_fd=self._folder, dst_dir_fd=self._folder)
        self._temporary = ""
        return info

    def __exit__(self, *exc_info: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        if self._temporary:
            with suppress(OSError):
                os.unlink(self._temporary, dir_fd=self._folder)
        os.close(self._folder)


def stat_file(workspace: Path, name: str) -> os.stat_result | None:
    """lstat() of a top-level entry of the workspace (None when it does not exist)."""
    with open_folder(workspace) as folder:
        try:
            return os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None


def place_link(workspace: Path, name: str, target: str) -> None:
    """Make a top-level name of the workspace a symbolic link to `target`, replacing what
    had the name (a file, a link; never what a link points to: the new link is renamed over
    it). A folder of that name is left and raises.

    Raises:
        UnsafePath: The name is not a plain file name.
        IsADirectoryError: A folder has the name.
    """
    if relative_parts(name) != [name]:
        raise UnsafePath(f"not a plain file name: {name!r}")
    temporary = f".incoming-{uuid.uuid4().hex}"
    with open_folder(workspace) as folder:
        os.symlink(target, temporary, dir_fd=folder)
        try:
            os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise


def link_target(workspace: Path, name: str) -> str | None:
    """Where a top-level entry of the workspace links to (None: no such link)."""
    with open_folder(workspace) as folder:
        try:
            return os.readlink(name, dir_fd=folder)
        except OSError:  # gone, or not a link
            return None

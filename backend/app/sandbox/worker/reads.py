"""Which files of the workspace a step read, as the kernel saw it (inotify).

Python's audit hooks see `open()`, but DuckDB and pyarrow read through C++ and a glob or a
path in a variable hides the name from the code's text: only the kernel sees every read.
The supervisor (never the runner: the code cannot reach its descriptor) watches the
workspace's top folder while a step runs, and the folder of the project's files that the
workspace's links lead to (a read through a link is the kernel's event on the file's own
folder, under the same name). A name counts as
read when it was opened and not written in the step before it was read: files the code
wrote itself are not project files it read.

No new dependency: inotify through ctypes on libc. Where the kernel gives no watch (the
user's instances are used up), `ReadWatch.start` returns None and results carry no reads.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct

from app.sandbox.layout import FILES_INSIDE
from app.sandbox.protocol import MAX_READS, READ_NAME_CHARS

IN_ACCESS = 0x00000001
IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_CLOSE_NOWRITE = 0x00000010
IN_OPEN = 0x00000020
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_Q_OVERFLOW = 0x00004000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000

READ = IN_ACCESS | IN_CLOSE_NOWRITE
WRITTEN = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE
MASK = READ | WRITTEN | IN_OPEN | IN_ONLYDIR | IN_EXCL_UNLINK
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
# The names written in a step that are remembered (to tell them from reads): beyond that, a
# step that made more files may see one it made itself counted as read (the backend keeps
# only the run's project files among the names).
MAX_WRITTEN = 10_000
# The names a run request may ask about (a project's files) at the most.
MAX_WATCHED = 100_000


class ReadWatch:
    """An inotify watch on one folder, and what the events since `begin` say was read."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._opened: dict[str, None] = {}  # insertion-ordered sets
        self._read: dict[str, None] = {}
        self._written: set[str] = set()
        self._watch: set[str] | None = None

    @classmethod
    def start(cls, folder: str = ".", files: str = FILES_INSIDE) -> ReadWatch | None:
        """Watch `folder` (the workspace: the process's working directory) and `files`.

        Args:
            folder: The workspace.
            files: The project's files (watched where it exists: not without bubblewrap).

        Returns:
            The watch, or None when the kernel gives none (no inotify, no instance left).
        """
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, os.fsencode(folder), MASK) < 0:
            os.close(fd)
            return None
        if os.path.isdir(files):  # without it, reads of the project's files go unseen
            libc.inotify_add_watch(fd, os.fsencode(files), MASK)
        return cls(fd)

    def begin(self, watch: object = None) -> None:
        """A step starts: what happened before it (the host copying files) is not its.

        Args:
            watch: The names to report (the project's files, from the run request), or
                None to report any name read. Only names of those count, so a step that
                opens thousands of files of its own cannot crowd out the project's.
        """
        self.take_events()
        self._opened.clear()
        self._read.clear()
        self._written.clear()
        self._watch = None
        if isinstance(watch, list):
            self._watch = {n for n in watch[:MAX_WATCHED] if isinstance(n, str)}

    def take_events(self) -> None:
        """Read the events queued so far (the supervisor calls this while a step runs, so
        that the kernel's queue never overflows)."""
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                return
            self._digest(data)

    def reads(self) -> list[str]:
        """The names the step read (opened, and not written by it first), at most MAX_READS:
        a step that opens thousands of files it made itself must not swell its result past
        the protocol's frame limit (the backend keeps only the run's project files)."""
        self.take_events()
        names = list(self._read)
        names += [name for name in self._opened if name not in self._written]
        return list(dict.fromkeys(names))[:MAX_READS]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def _digest(self, data: bytes) -> None:
        offset = 0
        while offset + EVENT.size <= len(data):
            _, mask, _, length = EVENT.unpack_from(data, offset)
            raw = data[offset + EVENT.size : offset + EVENT.size + length].rstrip(b"\0")
            offset += EVENT.size + length
            if not raw or mask & IN_ISDIR or len(raw) > READ_NAME_CHARS:
                continue
            name = os.fsdecode(raw)
            if self._watch is not None and name not in self._watch:
                continue
            if mask & WRITTEN:
                if len(self._written) < MAX_WRITTEN:
                    self._written.add(name)
            elif name in self._written:
                continue
            elif mask & READ:
                self._remember(self._read, name)
            elif mask & IN_OPEN:
                self._remember(self._opened, name)

    @staticmethod
    def _remember(names: dict[str, None], name: str) -> None:
        if len(names) < MAX_READS:
            names[name] = None

"""DuckDB in the worker: analysis code queries files bigger than its memory
(`duckdb.sql("SELECT region, sum(x) FROM 'big.csv' GROUP BY 1").df()`).

DuckDB is not loaded at start-up (it would cost every worker address space); the first
import the code makes of it configures it (`DuckDBSetup.prepare`, called by the worker's
import hook) before the code can use it:

- `duckdb.connect()` is wrapped so that every database gets the sandbox's settings (the
  code's own `config` wins), and the module's default connection, which `duckdb.sql(...)`
  uses, is one of those;
- `memory_limit`: a share of the address space left when DuckDB is loaded. The worker's
  memory limit is RLIMIT_AS, which counts what DuckDB's allocator reserves as well as what
  it uses (about 1.2 times its limit at its peak, with `retain:false` set for its jemalloc by
  `isolation.worker_environment`), so DuckDB's own limit binds first: a query spills to disk
  or fails with DuckDB's out-of-memory error, and the worker lives on;
- spills go to a folder of their own per database in the workspace's bookkeeping folder
  (`layout.SPILL_DIR`), so they count against the disk quota the host measures, which
  stops a step that goes over it; `max_temp_directory_size` is the quota;
- no extension is installed or loaded by itself: the sandbox has no network, and an
  attempt would only fail (nothing waits for it);
- no progress bar (it would flood the step's output).

Nothing here widens what the code can do: DuckDB sees the files the sandbox shows and no
network, whatever it is told.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import resource
import shutil
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.sandbox.layout import SPILL_DIR

# What DuckDB may use of the address space left once it is loaded; the rest is for what it
# takes besides its limit (threads, readers), Python, pandas and the results the code
# brings back (`.df()`).
MEMORY_SHARE = 0.5
MIN_MEMORY_MB = 64
# Each DuckDB thread costs address space (its stack, an allocator arena) and counts
# against the worker's process limit (RLIMIT_NPROC).
MAX_THREADS = 8
MEMORY_PER_THREAD_MB = 128


def duckdb_memory_mb(memory_mb: int) -> int:
    """DuckDB's memory limit in MB: a share of the address space this process has left
    (of `memory_mb` when RLIMIT_AS is not set)."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    total = memory_mb if limit == resource.RLIM_INFINITY else limit >> 20
    return max(MIN_MEMORY_MB, int((total - _address_space_mb()) * MEMORY_SHARE))


def _address_space_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) >> 10
    return 0


def duckdb_threads(memory_mb: int) -> int:
    """DuckDB's threads: one per CPU this process may run on, at most MAX_THREADS, and at
    most one per MEMORY_PER_THREAD_MB of DuckDB's memory limit `memory_mb` (each thread of a
    big aggregation or sort holds buffers of its own: with less, it fails rather than
    spills)."""
    cpus = len(os.sched_getaffinity(0))
    return max(1, min(MAX_THREADS, cpus, memory_mb // MEMORY_PER_THREAD_MB))


class DuckDBSetup:
    """DuckDB's settings in one worker, and its spill folders (see the module)."""

    def __init__(self, memory_mb: int, disk_mb: int) -> None:
        """Nothing happens until the code imports DuckDB.

        Args:
            memory_mb: The worker's memory limit.
            disk_mb: The workspace's disk quota (what DuckDB may spill at most).
        """
        self.memory_mb = memory_mb
        self.disk_mb = disk_mb
        self.settings: dict[str, Any] | None = None
        self._spills: Path | None = None
        # The spill folder of each database opened, with its connection (while it lives).
        self._databases: list[tuple[weakref.ref[Any], str]] = []
        self._numbers = itertools.count()
        self._default: Any = None

    def prepare(self) -> None:
        """Configure DuckDB if it was loaded and is not configured yet (cheap otherwise).

        Called before each import the code makes, so the module the code gets is configured.
        """
        module: Any = sys.modules.get("duckdb")
        if module is None or self.settings is not None:
            return
        self._spills = Path.cwd() / SPILL_DIR  # each step starts in the workspace
        memory_mb = duckdb_memory_mb(self.memory_mb)
        self.settings = {
            "memory_limit": f"{memory_mb}MB",
            "threads": duckdb_threads(memory_mb),
            "max_temp_directory_size": f"{self.disk_mb}MB",
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
            # Threads for remote reads: there is no network here.
            "async_threads": 0,
        }
        module.connect = self._connect_function(module.connect)
        # Held here too: DuckDB's own reference to it is not one Python can see.
        self._default = module.connect()
        module.set_default_connection(self._default)

    def _connect_function(self, connect: Callable[..., Any]) -> Callable[..., Any]:
        def sandboxed_connect(
            database: Any = ":memory:",
            read_only: bool = False,
            config: dict[str, Any] | None = None,
        ) -> Any:
            """duckdb.connect with the sandbox's settings (see worker/duckdb_setup.py)."""
            folder = self._spill_folder(database)
            settings = {**(self.settings or {}), "temp_directory": str(folder), **(config or {})}
            connection = connect(database, read_only, settings)
            connection.execute("SET enable_progress_bar = false")
            self._databases.append((weakref.ref(connection), folder.name))
            return connection

        return sandboxed_connect

    def _spill_folder(self, database: Any) -> Path:
        """A folder per database: DuckDB removes the folder it made when the database
        closes, and a database file opened twice must be given the same settings."""
        assert self._spills is not None
        self._spills.mkdir(parents=True, exist_ok=True)
        name = str(database)
        if name in ("", ":memory:"):
            return self._spills / f"memory-{next(self._numbers)}"
        return self._spills / f"file-{hashlib.sha256(name.encode()).hexdigest()[:16]}"

    def after_step(self) -> None:
        """Remove the spill folders no open database uses (DuckDB removes what a finished
        query spilled; a database the code dropped may leave its folder)."""
        if self._spills is None:
            return
        self._databases = [(ref, name) for ref, name in self._databases if ref() is not None]
        open_folders = {name for _, name in self._databases}
        try:
            entries = list(os.scandir(self._spills))
        except OSError:
            return
        for entry in entries:
            if entry.name in open_folders:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

"""How a worker is isolated: the bubblewrap command line, its environment, resource limits.

With bubblewrap the worker gets new user/pid/net/ipc/uts namespaces (no network, no view
of the backend's processes), a read-only root that shows only the Python runtime and the
sandbox package, the session's workspace read-write at /workspace, the project's files it
is given read-only at FILES_INSIDE (the workspace links to them) and a private /tmp.
Without it ("rlimits") the worker is a plain child process with a scrubbed environment, the
same resource limits and, where `unshare` allows, no network.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.sandbox.layout import (
    CACHE_INSIDE,
    FILES_INSIDE,
    LIBRARY_INSIDE,
    OUTPUT_INSIDE,
    OUTPUT_MB,
    WORKSPACE_INSIDE,
    WORKSPACES_INSIDE,
    files_view,
    python_roots,
)

logger = logging.getLogger(__name__)

Mechanism = Literal["bubblewrap", "rlimits"]
Policy = Literal["required", "none"]

PACKAGE_DIR = Path(__file__).resolve().parent
# What a worker is given of this package: its own room and the modules both sides share
# (app/sandbox/worker/__init__.py). The host's modules are not there to import.
INSIDE = ("worker", "interface.py", "protocol.py", "layout.py", "snapshot_format.py")
BWRAP_QUERY_SECONDS = 30.0


@dataclass(frozen=True)
class Isolation:
    """The outcome of probing the host (once per process).

    Attributes:
        mechanism: "bubblewrap", "rlimits" (SANDBOX_ISOLATION=none), or None: no sandbox
            can be created and analysis is disabled.
        detail: One sentence for operators (shown in /readyz and the start-up log).
        bwrap_options: Namespace options of the bwrap variant that worked.
        launcher: For "rlimits": commands to run the worker through (`unshare` removing the
            network, `setpriv` making it die with the backend), as far as available.
        own_user_namespace: The worker runs in its own user namespace, so RLIMIT_NPROC
            counts only its own processes.
        bwrap: Path of the bwrap executable that worked.
        fix: What the operator can do when mechanism is None.
    """

    mechanism: Mechanism | None
    detail: str
    bwrap_options: tuple[str, ...] = ()
    launcher: tuple[str, ...] = ()
    own_user_namespace: bool = False
    bwrap: str = ""
    fix: str | None = None


@dataclass(frozen=True)
class Launch:
    """How to start one worker process."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    scratch: Path | None  # a host folder to delete when the worker is gone ("rlimits")


def thread_count() -> str:
    """Threads for BLAS/OpenMP: at most 2, so that several sessions share the CPUs."""
    return str(min(2, os.cpu_count() or 1))


def worker_environment(
    *, home: str, library: str, cache: str | None, pycache: bool
) -> dict[str, str]:
    """The complete environment of a worker; nothing of the backend's environment is copied.

    Args:
        home: HOME and TMPDIR of the worker.
        library: The folder whose `app/sandbox` is the sandbox package (PYTHONPATH).
        cache: The prepared runtime cache (bytecode, matplotlib font list), if any.
        pycache: Whether the cache holds the bytecode (PYTHONPYCACHEPREFIX).

    Returns:
        The environment variables.
    """
    threads = thread_count()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/matplotlib",
        "PYTHONPATH": library,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OPENBLAS_NUM_THREADS": threads,
        "OMP_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "NUMEXPR_NUM_THREADS": threads,
        # glibc reserves 64 MB of address space per malloc arena; RLIMIT_AS counts it.
        "MALLOC_ARENA_MAX": "2",
        # DuckDB's jemalloc keeps the address space it ever had (and grows it in ever larger
        # steps) unless told to give it back; RLIMIT_AS counts it (worker/duckdb_setup.py).
        "DUCKDB_JE_MALLOC_CONF": "retain:false",
        # No process pools (the system-call filter refuses new processes): joblib and
        # scikit-learn's n_jobs then run sequentially instead of failing.
        "JOBLIB_MULTIPROCESSING": "0",
    }
    if cache is not None:
        env["WORKBENCH_MPL_CACHE"] = f"{cache}/matplotlib"
        if pycache:
            env["PYTHONPYCACHEPREFIX"] = f"{cache}/pycache"
    return env


def _runtime_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():  # merged /usr, as Debian has it
            args += ["--symlink", os.readlink(top), f"/{name}"]
        elif top.is_dir():
            args += ["--ro-bind", str(top), f"/{name}"]
    for etc in ("/etc/ld.so.cache", "/etc/localtime", "/etc/fonts"):
        args += ["--ro-bind-try", etc, etc]
    for root in python_roots():
        args += ["--ro-bind", root, root]
    return args


def bwrap_argv(
    bwrap: str,
    options: tuple[str, ...],
    workspace: Path | None,
    cache: Path | None,
    command: list[str],
    tmpfs_mb: tuple[int, int] = (64, 16),
    workspaces: Path | None = None,
    files: Path | None = None,
) -> list[str]:
    """The bubblewrap command line around a command.

    Args:
        bwrap: Path of the bwrap executable.
        options: Namespace/user options (from the probe).
        workspace: Host folder bound read-write at /workspace (None: an empty folder).
        cache: Host runtime cache bound read-only, if any.
        command: What to run inside.
        tmpfs_mb: Sizes of the private /tmp and /dev/shm in MB (they live in memory, so
            they come out of the worker's memory limit).
        workspaces: For the fork server only: the folder of every session's workspace,
            bound read-write at WORKSPACES_INSIDE (and an empty FILES_INSIDE, on which each
            forked worker binds its own files).
        files: Host folder of the project's files given to the workspace, bound read-only
            at FILES_INSIDE: the code reads them, and can neither write, rename nor delete
            them (the mount is read-only; a hard link out of it crosses mounts).

    Returns:
        The full argv.
    """
    # The private /tmp (and /proc, /dev) first: bwrap applies mounts in order, and the
    # runtime may itself live under /tmp (a checkout there, a venv there), so its binds must
    # land on top of the tmpfs rather than be hidden by it.
    argv = [bwrap, *options, "--proc", "/proc", "--dev", "/dev"]
    if bwrap_supports(bwrap, "--size"):
        argv += ["--size", str(tmpfs_mb[0] << 20), "--tmpfs", "/tmp"]
        argv += ["--size", str(tmpfs_mb[1] << 20), "--tmpfs", "/dev/shm"]
        # The output capture has a tmpfs of its own: a full /tmp must not silence a session,
        # and a step's output is capped at this size (then writes fail with ENOSPC).
        argv += ["--size", str(OUTPUT_MB << 20), "--tmpfs", OUTPUT_INSIDE]
    else:
        argv += ["--tmpfs", "/tmp", "--tmpfs", OUTPUT_INSIDE]
    argv += _runtime_mounts()
    argv += ["--dir", f"{LIBRARY_INSIDE}/app/sandbox"]
    for name in INSIDE:
        argv += ["--ro-bind", str(PACKAGE_DIR / name), f"{LIBRARY_INSIDE}/app/sandbox/{name}"]
    if cache is not None:
        argv += ["--ro-bind", str(cache), CACHE_INSIDE]
    if workspace is not None:
        argv += ["--bind", str(workspace), WORKSPACE_INSIDE]
    else:
        argv += ["--dir", WORKSPACE_INSIDE]
    if workspaces is not None:
        argv += ["--bind", str(workspaces), WORKSPACES_INSIDE, "--dir", FILES_INSIDE]
    if files is not None:
        argv += ["--ro-bind", str(files), FILES_INSIDE]
    # Everything not bound read-write above (the root, the folders bwrap created) is read-only.
    chdir = WORKSPACE_INSIDE if workspace is not None else "/"
    argv += ["--remount-ro", "/", "--chdir", chdir, "--", *command]
    return argv


@functools.cache
def bwrap_says(bwrap: str, flag: str) -> str:
    """What a bwrap prints for `--help` or `--version` ("" when it cannot be run)."""
    try:
        done = subprocess.run(
            [bwrap, flag], capture_output=True, text=True, timeout=BWRAP_QUERY_SECONDS
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr


def bwrap_supports(bwrap: str, option: str) -> bool:
    """Whether this bwrap knows an option (older ones lack --size, --disable-userns)."""
    return f"{option} " in bwrap_says(bwrap, "--help")


def build_launch(
    isolation: Isolation,
    workspace: Path,
    cache: Path | None,
    pycache: bool,
    tmpfs_mb: tuple[int, int] = (64, 16),
) -> Launch:
    """The command, environment and working directory of a new worker.

    Args:
        isolation: The probe's outcome.
        workspace: The session's workspace on the host.
        cache: The runtime cache folder, if one was prepared.
        pycache: Whether the cache holds bytecode.
        tmpfs_mb: Sizes of the private /tmp and /dev/shm (bubblewrap only).

    Returns:
        What to pass to subprocess.Popen.
    """
    command = [sys.executable, "-m", "app.sandbox.worker"]
    if isolation.mechanism is None:
        raise RuntimeError(f"no sandbox can be created: {isolation.detail}")
    if isolation.mechanism == "bubblewrap":
        env = _environment_inside(cache, pycache)
        files_view(workspace).mkdir(parents=True, exist_ok=True)
        argv = bwrap_argv(
            isolation.bwrap,
            isolation.bwrap_options,
            workspace,
            cache,
            command,
            tmpfs_mb,
            files=files_view(workspace),
        )
        return Launch(argv, env, workspace, None)
    scratch = Path(tempfile.mkdtemp(prefix="workbench-worker-"))
    env = worker_environment(
        home=str(scratch),
        library=str(link_package(scratch)),
        cache=str(cache) if cache is not None else None,
        pycache=pycache,
    )
    return Launch([*isolation.launcher, *command], env, workspace, scratch)


def _environment_inside(cache: Path | None, pycache: bool) -> dict[str, str]:
    """The environment of a process inside the bubblewrap sandbox (worker or fork server)."""
    env = worker_environment(
        home="/tmp",
        library=LIBRARY_INSIDE,
        cache=CACHE_INSIDE if cache is not None else None,
        pycache=pycache,
    )
    env["WORKBENCH_OUTPUT_DIR"] = OUTPUT_INSIDE
    return env


def build_fork_server_launch(
    isolation: Isolation, workspaces: Path, cache: Path | None, pycache: bool
) -> Launch:
    """The command and environment of the fork server (worker/zygote.py) for a workspaces folder.

    The same sandbox as a worker's, but with every workspace bound (its forked workers each
    keep only their own) and without bwrap's --disable-userns: the workers' isolation is
    made of user namespaces the fork server creates. Its workers then create none.

    Args:
        isolation: The probe's outcome (bubblewrap only).
        workspaces: The folder holding one workspace folder per session.
        cache: The runtime cache folder, if one was prepared.
        pycache: Whether the cache holds bytecode.

    Returns:
        What to pass to subprocess.Popen (the caller adds the control socket).
    """
    if isolation.mechanism != "bubblewrap":
        raise RuntimeError("the fork server needs bubblewrap")
    env = _environment_inside(cache, pycache)
    options = _fork_server_options(isolation.bwrap_options)
    command = [sys.executable, "-m", "app.sandbox.worker.zygote"]
    argv = bwrap_argv(
        isolation.bwrap, options, None, cache, command, (16, 1), workspaces=workspaces
    )
    return Launch(argv, env, workspaces, None)


def _fork_server_options(worker_options: tuple[str, ...]) -> tuple[str, ...]:
    """bwrap's options for the fork server, from a worker's.

    - No --disable-userns: the workers' isolation is made of user namespaces it creates.
    - No --uid/--gid: a change of uid makes bwrap nest a second user namespace, in which no
      capability reaches the mounts; the fork server's workers are `SANDBOX_UID` in
      namespaces of their own instead (worker/zygote.py maps it).
    - CAP_SYS_ADMIN, only to take bwrap's covers off its /proc at start (worker/zygote.py drops
      it at once): a /proc with covers on it bars every worker from a /proc of its own.
    - CAP_SETFCAP, kept by the fork server: where its uid is 0 (the backend runs as root),
      mapping that uid into a worker's namespace needs it.
    """
    options: list[str] = []
    skip = False
    for option in worker_options:
        if skip:
            skip = False
        elif option in ("--uid", "--gid"):
            skip = True
        elif option != "--disable-userns":
            options.append(option)
    return (*options, "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETFCAP")


def link_package(folder: Path) -> Path:
    """Make `folder/lib/app/sandbox` hold what a worker is given of this package (`INSIDE`),
    so that only that is importable.

    `app` and `app.sandbox` are namespace packages there: the rest of the backend, and the
    host's side of the sandbox, are not on the path.

    Args:
        folder: A private folder.

    Returns:
        The folder to put on PYTHONPATH.
    """
    library = folder / "lib"
    package = library / "app" / "sandbox"
    package.mkdir(parents=True, exist_ok=True)
    for name in INSIDE:
        (package / name).symlink_to(PACKAGE_DIR / name, target_is_directory=name == "worker")
    return library

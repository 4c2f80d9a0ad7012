"""A read-only cache workers start from: compiled bytecode and matplotlib's font list.

Without it every worker would compile pandas & co. from source (when the runtime ships no
bytecode, as in a `uv sync` development checkout) and rebuild matplotlib's font list: seconds
of start-up each time. The cache is built once per runtime by a trusted process that only
imports the libraries, never by a sandbox (analysis code must not be able to plant bytecode
that other sessions would run), and sandboxes see it read-only.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from app.sandbox.isolation import link_package, worker_environment
from app.sandbox.worker.modules import STARTUP_MODULES, WARM_MODULES

logger = logging.getLogger(__name__)

CACHE_ENV = "WORKBENCH_SANDBOX_CACHE"
BUILD_TIMEOUT_SECONDS = 900.0
READY_MARKER = "ready"
# Raised when what a cache holds changes (2: every module of the libraries, not only those
# imported), so that caches built before are built again.
CACHE_FORMAT = 2
# While the cache builds, a line of progress at least this often (and at each phase's ends).
PROGRESS_EVERY_SECONDS = 5.0
# Caches of other runtimes (older package sets) unused this long are removed.
STALE_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class RuntimeCache:
    """A prepared cache folder.

    Attributes:
        path: The folder (with `matplotlib/` and, if `pycache`, `pycache/`).
        pycache: The runtime has no bytecode of its own; workers use the cache's.
    """

    path: Path
    pycache: bool


_lock = threading.Lock()
_prepared: dict[str, RuntimeCache | None] = {}


def runtime_cache() -> RuntimeCache | None:
    """The runtime cache, built on first use (blocking; tens of seconds the very first time).

    Returns:
        The cache, or None if it could not be built (workers then start more slowly).
    """
    with _lock:
        if "cache" not in _prepared:
            _prepared["cache"] = _prepare()
        return _prepared["cache"]


def _runtime_has_bytecode() -> bool:
    """Whether the installer compiled the libraries (pip does, `uv sync` does not). Judged
    by a pandas module that no process here imports (the Styler's), not by pandas itself:
    the backend importing pandas for a preview writes its bytecode where it may, and the
    runtime would then pass for compiled on the next start (a new cache, workers compiling
    from source all that the backend never imported)."""
    spec = importlib.util.find_spec("pandas")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return False
    formats = Path(spec.origin).parent / "io" / "formats"
    return (formats / "__pycache__" / f"style_render.{sys.implementation.cache_tag}.pyc").exists()


def _cache_home() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "workbench" / "sandbox"


def _cache_key(pycache: bool) -> str:
    # Installing or removing a package touches site-packages: a new key, a fresh cache.
    stamps = [str(CACHE_FORMAT), sys.version, sys.prefix, str(pycache)]
    stamps += [*STARTUP_MODULES, *WARM_MODULES]
    stamps += [str(os.stat(d).st_mtime_ns) for d in site.getsitepackages() if os.path.isdir(d)]
    return hashlib.sha256("|".join(stamps).encode()).hexdigest()[:16]


def _prepare() -> RuntimeCache | None:
    pycache = not _runtime_has_bytecode()
    target = _cache_home() / f"runtime-{_cache_key(pycache)}"
    _remove_stale(target)
    if (target / READY_MARKER).exists():
        (target / READY_MARKER).touch()  # marks it as in use
        return RuntimeCache(target, pycache)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with _build_lock(target):
            # Another process (`make run` starts one while the browser app builds, a second
            # backend…) may have built it while this one waited.
            if (target / READY_MARKER).exists():
                return RuntimeCache(target, pycache)
            _build_into(target, pycache)
    except OSError as exc:
        logger.warning("Sandbox: no runtime cache (%s); workers will start slowly", exc)
        return None
    return RuntimeCache(target, pycache) if (target / READY_MARKER).exists() else None


@contextmanager
def _build_lock(target: Path) -> Iterator[None]:
    """One builder per cache across processes: the others wait for it (and then use its
    cache) rather than compile the same libraries again on the same cores."""
    with open(target.parent / f"{target.name}.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.info("Sandbox: waiting for the runtime cache another process prepares…")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_into(target: Path, pycache: bool) -> None:
    what = "compiling the analysis libraries" if pycache else "matplotlib's fonts"
    logger.info(
        "Sandbox: preparing the runtime cache (%s; first start only, %s) in %s",
        what,
        "about a minute" if pycache else "a few seconds",
        target,
    )
    started = time.monotonic()
    building = Path(tempfile.mkdtemp(prefix=f"{target.name}.building-", dir=target.parent))
    try:
        _build(building, pycache)
        (building / READY_MARKER).write_text("")
        os.rename(building, target)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("Sandbox: runtime cache failed (%s); workers will start slowly", exc)
        return
    finally:
        shutil.rmtree(building, ignore_errors=True)
    logger.info("Sandbox: runtime cache ready (%.0f s)", time.monotonic() - started)


def _remove_stale(current: Path) -> None:
    if not current.parent.is_dir():
        return
    now = time.time()
    for folder in current.parent.glob("runtime-*"):
        if folder == current:
            continue
        marker = folder / READY_MARKER
        try:
            # Unfinished builds have no marker: judge them by the folder itself.
            unused = now - (marker if marker.exists() else folder).stat().st_mtime
        except OSError:
            continue
        if unused > STALE_SECONDS:
            if folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
            else:  # a build's lock file
                folder.unlink(missing_ok=True)


def _build(folder: Path, pycache: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="workbench-cache-build-") as scratch:
        env = worker_environment(
            home=scratch, library=str(link_package(Path(scratch))), cache=None, pycache=False
        )
        env["MPLCONFIGDIR"] = str(folder / "matplotlib")
        command = [sys.executable, "-m", "app.sandbox.worker", "--prepare-runtime-cache"]
        if pycache:
            env.pop("PYTHONDONTWRITEBYTECODE")
            env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
            command.append("--bytecode")
        builder = subprocess.Popen(
            command,
            cwd=scratch,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Past the deadline the builder is killed, which ends its output and so the loop.
        deadline = threading.Timer(BUILD_TIMEOUT_SECONDS, builder.kill)
        deadline.start()
        try:
            errors = _collect(builder.stderr)
            _report_progress(builder.stdout)
            builder.wait()
            errors.join()
        finally:
            deadline.cancel()
        if builder.returncode != 0:
            said = "".join(errors.lines).strip()[-2000:]
            raise subprocess.SubprocessError(f"exit status {builder.returncode}: {said}")


class _Collected(threading.Thread):
    def __init__(self, stream: IO[str]):
        super().__init__(daemon=True)
        self.stream = stream
        self.lines: list[str] = []

    def run(self) -> None:
        self.lines.extend(self.stream)


def _collect(stream: IO[str] | None) -> _Collected:
    assert stream is not None
    reader = _Collected(stream)
    reader.start()
    return reader


def _report_progress(stream: IO[str] | None) -> None:
    """Log the builder's `progress <phase> <done> <total> <name>` lines: the first and last
    of each phase, and one every PROGRESS_EVERY_SECONDS between them."""
    assert stream is not None
    phases = {"import": "importing the libraries", "compile": "compiling their packages"}
    told: tuple[str, float] | None = None
    for line in stream:
        parts = line.split()
        if len(parts) != 5 or parts[0] != "progress" or parts[1] not in phases:
            continue
        phase, done, total, name = parts[1], int(parts[2]), int(parts[3]), parts[4]
        now = time.monotonic()
        due = told is None or told[0] != phase or now - told[1] >= PROGRESS_EVERY_SECONDS
        if due or done == total:
            step = list(phases).index(phase) + 1
            logger.info(
                "Sandbox runtime [%d/2] %s: %d of %d (%s)", step, phases[phase], done, total, name
            )
            told = (phase, now)


def main() -> int:
    """Build the cache now, as `make run` does while the browser app builds (run through
    `python -c`: `python -m` of a module its package imports runs it twice).

    Returns:
        The exit status: 1 if the cache could not be built (the reason is logged).
    """
    logging.basicConfig(level=logging.INFO, format="      %(message)s")
    return 0 if runtime_cache() is not None else 1

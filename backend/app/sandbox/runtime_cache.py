"""A read-only cache workers start from: compiled bytecode and matplotlib's font list.

Without it every worker would compile pandas & co. from source (when the runtime ships no
bytecode, as in a `uv sync` development checkout) and rebuild matplotlib's font list: seconds
of start-up each time. The cache is built once per runtime by a trusted process that only
imports the libraries, never by a sandbox (analysis code must not be able to plant bytecode
that other sessions would run), and sandboxes see it read-only.
"""

from __future__ import annotations

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
from dataclasses import dataclass
from pathlib import Path

from app.sandbox.isolation import link_package, worker_environment
from app.sandbox.worker.modules import STARTUP_MODULES, WARM_MODULES

logger = logging.getLogger(__name__)

CACHE_ENV = "WORKBENCH_SANDBOX_CACHE"
BUILD_TIMEOUT_SECONDS = 900.0
READY_MARKER = "ready"
# Raised when what a cache holds changes (2: every module of the libraries, not only those
# imported), so that caches built before are built again.
CACHE_FORMAT = 2
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
    spec = importlib.util.find_spec("pandas")
    if spec is None or spec.origin is None:
        return False
    origin = Path(spec.origin)
    compiled = origin.parent / "__pycache__" / f"{origin.stem}.{sys.implementation.cache_tag}.pyc"
    return compiled.exists()


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
    logger.info("Sandbox: preparing the runtime cache in %s (once per runtime)", target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f"{target.name}.building-", dir=target.parent))
    except OSError as exc:
        logger.warning("Sandbox: no runtime cache (%s); workers will start slowly", exc)
        return None
    try:
        _build(building, pycache)
        (building / READY_MARKER).write_text("")
        os.rename(building, target)
    except (OSError, subprocess.SubprocessError) as exc:
        if not (target / READY_MARKER).exists():  # another process may have won the race
            logger.warning("Sandbox: runtime cache failed (%s); workers will start slowly", exc)
            return None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return RuntimeCache(target, pycache)


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
            shutil.rmtree(folder, ignore_errors=True)


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
        done = subprocess.run(
            command,
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_SECONDS,
        )
        if done.returncode != 0:
            raise subprocess.SubprocessError(
                f"exit status {done.returncode}: {done.stderr.strip()[-2000:]}"
            )

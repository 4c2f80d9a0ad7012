"""Where things are inside the sandbox, for both sides: the host builds the sandbox to
this plan, and the worker and fork server find their way by it.
"""

from __future__ import annotations

import os
import re
import site
import sys
from pathlib import Path

# Inside the bubblewrap sandbox.
WORKSPACE_INSIDE = "/workspace"
# A workspace is named by its folder only (a session id, or spare-<hex>).
WORKSPACE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# The fork server's view of every session's workspace folder (see worker/zygote.py).
WORKSPACES_INSIDE = "/run/workbench-workspaces"
# The project's files of the session, read-only (see FILES_FOLDER); the workspace holds a
# link to each under its plain name.
FILES_INSIDE = "/run/workbench-files"
# In the folder of the workspaces: one folder per workspace (named like it) holding the
# project's files it is given, each a hard link to one cached copy of the file's bytes.
# Bound read-only at FILES_INSIDE, never writable by the code. Its name is no workspace's.
FILES_FOLDER = ".files"
LIBRARY_INSIDE = "/opt/workbench/lib"
CACHE_INSIDE = "/opt/workbench/cache"
SANDBOX_UID = 65534  # "nobody"
OUTPUT_INSIDE = "/run/workbench-output"
OUTPUT_MB = 16
# The backend's bookkeeping in a workspace (snapshots, the step's output files): hidden
# from listings and never an artifact.
BOOKKEEPING_DIR = ".workbench"
# Where DuckDB spills in a workspace (worker/duckdb_setup.py): counted against the disk
# quota, and removed by the host when the worker is gone.
SPILL_DIR = f"{BOOKKEEPING_DIR}/duckdb"


def files_view(workspace: Path) -> Path:
    """The folder of the project's files given to a workspace (see FILES_FOLDER)."""
    return workspace.parent / FILES_FOLDER / workspace.name


def python_roots() -> list[str]:
    """Folders that hold the Python runtime: base installation, venv, site-packages.

    Returns:
        Distinct absolute paths, none inside another, outside /usr (mounted whole anyway).
    """
    candidates = {
        sys.base_prefix,
        sys.base_exec_prefix,
        sys.prefix,
        sys.exec_prefix,
        *site.getsitepackages(),
    }
    roots: list[str] = []
    for candidate in sorted({os.path.realpath(p) for p in candidates} | candidates, key=len):
        if not os.path.isdir(candidate) or candidate in ("/", "/usr"):
            continue
        if any(candidate == r or candidate.startswith(r.rstrip("/") + "/") for r in roots):
            continue
        if candidate.startswith("/usr/"):
            continue
        roots.append(candidate)
    return roots

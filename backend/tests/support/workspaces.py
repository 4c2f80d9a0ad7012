"""A project's file as a session's sandbox finds it, read from the host (docs/sandbox.md):
a link under the file's own name in the session's workspace, to the session's read-only
folder of project files, which holds the bytes (hard links to one copy, never a copy each)."""

from __future__ import annotations

from pathlib import Path


def project_file(data_dir: Path | str, session_id: str, name: str) -> bytes:
    """The bytes the session's code reads as `name`, after checking it reaches them by link."""
    workspaces = Path(data_dir, "workspaces")
    assert (workspaces / session_id / name).is_symlink(), f"{name} is not linked in the workspace"
    return (workspaces / ".files" / session_id / name).read_bytes()

"""Each attempt's own folder (and so its own sandbox worker): forked from the session's.

An attempt works in a *space*: a folder under DATA_DIR/workspaces named by an id made
from the run and the attempt's number, which the sandbox pool treats like a session (a
slot of its own, queued fairly with everyone's). The space starts with the project's files
(as for any run) and the session's variables: its snapshot, copied from the session's
workspace when that holds the session's generation (else fetched from storage), restored
by the space's new worker (app.runs.state_fork: the same start as a repair strategy's
worker). What an attempt writes stays in its space until it is chosen; then its files are
copied into the session's folder (`copy_files`), and every space is removed.
"""

from __future__ import annotations

import uuid

from app.runs.state_fork import copy_files

__all__ = ["copy_files", "space_id"]


def space_id(run_id: uuid.UUID, attempt: int) -> uuid.UUID:
    """The id of an attempt's space (stable: any replica finds the same)."""
    return uuid.uuid5(run_id, f"attempt-{attempt}")

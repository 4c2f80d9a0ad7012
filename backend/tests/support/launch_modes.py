"""Sandbox workers started both ways: a new Python under bubblewrap ("exec"), or forked by
the fork server ("fork"). Tests of isolation and limits run against both."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from app.sandbox import LocalLauncher, SandboxLimits, SandboxWorker
from app.sandbox.forkserver import ForkedChannel
from app.sandbox.transport import ProcessChannel

LAUNCH_MODES = ["exec", "fork"]


@contextlib.contextmanager
def worker_started(mode: str, folder: Path, limits: SandboxLimits) -> Iterator[SandboxWorker]:
    """A started worker whose workspace is `folder/session` (empty folder expected).

    Fails if the worker did not start the way `mode` says (a fork server that silently fell
    back to starting Python would otherwise pass every fork test).
    """
    workspace = folder / "session"
    workspace.mkdir()
    launcher = LocalLauncher(workspaces=folder if mode == "fork" else None)
    try:
        with SandboxWorker(workspace, launcher=launcher, limits=limits) as worker:
            assert worker.run("1").output == "1"
            expected = ForkedChannel if mode == "fork" else ProcessChannel
            assert isinstance(worker._channel, expected), worker._channel
            yield worker
    finally:
        launcher.close()

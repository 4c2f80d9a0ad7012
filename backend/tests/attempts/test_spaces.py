"""An attempt's space starts from the session's variables (app.runs.state_fork.seed_space):
the session's snapshot copied from its workspace, restored by the space's own worker, for
real in the sandbox. Each space's copy is its own: one attempt's save cannot reach the
session's nor a sibling's."""

from __future__ import annotations

import uuid
from pathlib import Path

from app.attempts.spaces import space_id
from app.runs import snapshots
from app.runs.state_fork import seed_space
from app.runs.workspace import snapshot_marker_path, workspace_dir
from app.sandbox import SandboxWorker

BUDGET = 1 << 30
MAKE = (
    "import numpy as np\nimport pandas as pd\n"
    "frame = pd.DataFrame({'x': np.arange(6) / 3, 'name': list('abcabc')})"
)
SHOW = "print(round(float(frame['x'].sum()), 6), ''.join(frame['name']))"


def printed(worker: SandboxWorker, code: str) -> str:
    result = worker.run(code)
    assert result.error is None, result.error
    return result.logs.strip().splitlines()[-1] if result.logs.strip() else ""


def test_each_space_starts_from_the_sessions_variables_and_keeps_them_apart(
    tmp_path: Path,
) -> None:
    session_id, run_id = uuid.uuid4(), uuid.uuid4()
    with SandboxWorker(workspace_dir(tmp_path, session_id)) as session:
        assert printed(session, f"{MAKE}\n{SHOW}") == "5.0 abcabc"
        report = session.snapshot(BUDGET)
    record = {**report.record(), "generation": "g1"}
    snapshots.remember(snapshot_marker_path(tmp_path, session_id), "g1")
    first, second = space_id(run_id, 1), space_id(run_id, 2)
    assert seed_space(tmp_path, session_id, first, record)
    assert seed_space(tmp_path, session_id, second, record)

    with SandboxWorker(workspace_dir(tmp_path, first)) as attempt:
        attempt.start()
        restored = attempt.take_restore_report()
        assert restored is not None and "frame" in restored.restored, restored
        assert printed(attempt, SHOW) == "5.0 abcabc"
        printed(attempt, "frame['x'] = -1.0")
        assert attempt.snapshot(BUDGET).changed  # written over its own copy
    for other in (second, session_id):
        with SandboxWorker(workspace_dir(tmp_path, other)) as worker:
            assert printed(worker, SHOW) == "5.0 abcabc", other


def test_a_space_fetches_what_the_session_workspace_does_not_hold(tmp_path: Path) -> None:
    session_id = uuid.uuid4()
    with SandboxWorker(workspace_dir(tmp_path, session_id)) as session:
        printed(session, MAKE)
        report = session.snapshot(BUDGET)
    record = {**report.record(), "generation": "g2"}
    space = uuid.uuid4()
    # No marker: the workspace's snapshot may be any generation (another replica ran it).
    assert not seed_space(tmp_path, session_id, space, record)
    snapshots.remember(snapshot_marker_path(tmp_path, session_id), "g1")
    assert not seed_space(tmp_path, session_id, space, record)
    assert not seed_space(tmp_path, session_id, space, None)
    assert not workspace_dir(tmp_path, space).exists()

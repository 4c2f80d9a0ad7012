"""The code sandbox: analysis code runs in an isolated worker process, one per live session.

smolagents' LocalPythonExecutor is not a security boundary, so it runs inside a worker that
the operating system isolates (bubblewrap: no network, no secrets, only the runtime and the
session's workspace visible; a system-call filter; resource limits; a wall-clock limit per
step enforced by killing the worker). The worker is started by the backend itself or by the
sandbox service (`service.py`), through a `WorkerLauncher`; the backend talks to it through
`SandboxWorker`, and the agent through `SandboxExecutor`.

This package must not import the rest of the backend: only `app/sandbox` is visible inside
the sandbox. The rest of the backend imports the sandbox from here (and from `interface`
and `protocol`, which both sides share), never from the modules behind it.
"""

from app.sandbox import hostfs
from app.sandbox.capture import BOOKKEEPING_DIR
from app.sandbox.client import SandboxError, SandboxStepError, SandboxWorker, prepare_sandbox
from app.sandbox.interface import (
    DEFAULT_AUTHORIZED_IMPORTS,
    PLOTLY_MIME,
    REFUSED_PREFIX,
    ArtifactFile,
    CodeForApproval,
    SandboxLimits,
    SandboxStatus,
    StepResult,
    UserQuestion,
)
from app.sandbox.snapshot import SNAPSHOT_DIR, RestoreReport, SnapshotReport
from app.sandbox.spawn import (
    LocalLauncher,
    SandboxUnavailable,
    ServiceLauncher,
    WorkerLauncher,
)

__all__ = [
    "BOOKKEEPING_DIR",
    "DEFAULT_AUTHORIZED_IMPORTS",
    "PLOTLY_MIME",
    "REFUSED_PREFIX",
    "SNAPSHOT_DIR",
    "ArtifactFile",
    "CodeForApproval",
    "LocalLauncher",
    "RestoreReport",
    "SandboxError",
    "SandboxLimits",
    "SandboxStatus",
    "SandboxStepError",
    "SandboxUnavailable",
    "SandboxWorker",
    "ServiceLauncher",
    "SnapshotReport",
    "StepResult",
    "UserQuestion",
    "WorkerLauncher",
    "hostfs",
    "prepare_sandbox",
]

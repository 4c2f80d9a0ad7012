"""The code sandbox: analysis code runs in an isolated worker process, one per live session.

smolagents' LocalPythonExecutor is not a security boundary, so it runs inside a worker that
the operating system isolates (bubblewrap: no network, no secrets, only the runtime and the
session's workspace visible; a system-call filter; resource limits; a wall-clock limit per
step enforced by killing the worker). The worker is started by the backend itself or by the
sandbox service (`service.py`), through a `WorkerLauncher`; the backend talks to it through
`SandboxWorker`, and the agent through `SandboxExecutor`.

Two rooms by trust. `worker/` runs inside the sandbox and is given nothing but itself and
the modules both sides share (`interface`, `protocol`, `layout`, `snapshot_format`; see
`isolation.INSIDE`); the other modules here are the host's (the backend's and the sandbox
service's), and read everything a worker sends as hostile. tests/test_import_rules.py
holds the inside room to its imports.

This package imports nothing else of the backend. The rest of the backend imports the
sandbox from here (and from `interface` and `protocol`), never from the modules behind it.
"""

from app.sandbox import hostfs
from app.sandbox.asks import AskRefused, DataAnswerer, QueryRecord
from app.sandbox.client import SandboxStepError, SandboxWorker
from app.sandbox.connection import SandboxError
from app.sandbox.interface import (
    DEFAULT_AUTHORIZED_IMPORTS,
    PLOTLY_MIME,
    REFUSED_PREFIX,
    ArtifactFile,
    AskedAt,
    CodeForApproval,
    SandboxLimits,
    SandboxStatus,
    StepResult,
    UserQuestion,
)
from app.sandbox.layout import BOOKKEEPING_DIR
from app.sandbox.snapshot_format import SNAPSHOT_DIR, RestoreReport, SnapshotReport
from app.sandbox.spawn import (
    LocalLauncher,
    SandboxUnavailable,
    ServiceLauncher,
    WorkerLauncher,
    prepare_sandbox,
)

__all__ = [
    "BOOKKEEPING_DIR",
    "DEFAULT_AUTHORIZED_IMPORTS",
    "PLOTLY_MIME",
    "REFUSED_PREFIX",
    "SNAPSHOT_DIR",
    "ArtifactFile",
    "AskRefused",
    "AskedAt",
    "CodeForApproval",
    "DataAnswerer",
    "LocalLauncher",
    "QueryRecord",
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

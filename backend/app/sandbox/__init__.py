"""The code sandbox: analysis code runs in an isolated worker process, one per live session.

smolagents' LocalPythonExecutor is not a security boundary, so it runs inside a worker that
the operating system isolates (bubblewrap: no network, no secrets, only the runtime and the
session's workspace visible; a system-call filter; resource limits; a wall-clock limit per
step enforced by killing the worker). The worker is started by the backend itself or by the
sandbox service (`service.py`), through a `WorkerLauncher`; the backend talks to it through
`SandboxWorker`, and the agent through `SandboxExecutor`.

This package must not import the rest of the backend: only `app/sandbox` is visible inside
the sandbox.
"""

from app.sandbox.client import SandboxError, SandboxStepError, SandboxWorker, prepare_sandbox
from app.sandbox.executor import SandboxExecutor
from app.sandbox.interface import (
    DEFAULT_AUTHORIZED_IMPORTS,
    ArtifactFile,
    SandboxLimits,
    SandboxStatus,
    StepResult,
)
from app.sandbox.spawn import (
    LocalLauncher,
    SandboxUnavailable,
    ServiceLauncher,
    WorkerLauncher,
)

__all__ = [
    "DEFAULT_AUTHORIZED_IMPORTS",
    "ArtifactFile",
    "LocalLauncher",
    "SandboxError",
    "SandboxExecutor",
    "SandboxLimits",
    "SandboxStatus",
    "SandboxStepError",
    "SandboxUnavailable",
    "SandboxWorker",
    "ServiceLauncher",
    "StepResult",
    "WorkerLauncher",
    "prepare_sandbox",
]

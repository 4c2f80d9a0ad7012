"""The code sandbox: analysis code runs in an isolated worker process, one per live session.

smolagents' LocalPythonExecutor is not a security boundary, so it runs inside a worker that
the operating system isolates (bubblewrap: no network, no secrets, only the runtime and the
session's workspace visible; resource limits; a wall-clock limit per step enforced by
killing the worker). The backend talks to the worker over pipes through `SandboxWorker`, and
the agent through `SandboxExecutor`.

This package must not import the rest of the backend: only `app/sandbox` is visible inside
the sandbox.
"""

from app.sandbox.client import (
    SandboxError,
    SandboxExecutor,
    SandboxStepError,
    SandboxWorker,
    isolation_status,
    prepare_sandbox,
)
from app.sandbox.interface import (
    DEFAULT_AUTHORIZED_IMPORTS,
    ArtifactFile,
    SandboxLimits,
    StepResult,
)

__all__ = [
    "DEFAULT_AUTHORIZED_IMPORTS",
    "ArtifactFile",
    "SandboxError",
    "SandboxExecutor",
    "SandboxLimits",
    "SandboxStepError",
    "SandboxWorker",
    "StepResult",
    "isolation_status",
    "prepare_sandbox",
]

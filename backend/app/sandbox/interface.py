"""The values that cross the boundary between the backend and a sandbox worker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ArtifactKind = Literal["plotly", "image", "table", "file"]

PLOTLY_MIME = "application/vnd.plotly.v1+json"

# Each "x.*" also admits "x" itself (smolagents' import tree treats the star as "x and below").
DEFAULT_AUTHORIZED_IMPORTS: tuple[str, ...] = (
    "pandas.*",
    "numpy.*",
    "scipy.*",
    "sklearn.*",
    "statsmodels.*",
    "plotly.*",
    "matplotlib.*",
    "seaborn.*",
    "pyarrow.*",
    "openpyxl.*",
    "duckdb.*",
    "math",
    "statistics",
    "datetime",
    "re",
    "json",
    "collections",
    "itertools",
    "functools",
    "operator",
    "decimal",
    "fractions",
    "random",
    "string",
    "textwrap",
    "time",
    "calendar",
    "csv",
    "io",
    "copy",
    "heapq",
    "bisect",
    "typing",
    "dataclasses",
    "enum",
    "uuid",
    "hashlib",
    "warnings",
    "zoneinfo",
    "unicodedata",
)


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandbox worker.

    Attributes:
        memory_mb: Address-space cap of the worker process (RLIMIT_AS).
        cpu_seconds: CPU seconds for the worker's whole lifetime (RLIMIT_CPU).
        file_size_mb: Largest file the worker may write (RLIMIT_FSIZE).
        max_processes: Processes and threads the worker may have (RLIMIT_NPROC).
        step_timeout_seconds: Wall-clock limit of one code step, enforced by killing the worker.
        output_chars: Cap on the printed output returned per step (head and tail are kept).
        idle_seconds: How long an idle worker may live; the backend's reaper reads it.
        disk_mb: Size quota of the workspace (what the code writes included).
        max_artifacts: Charts, tables and files one step may produce.
        artifact_mb: What one step's charts, tables and files may take together.
    """

    memory_mb: int = 2048
    cpu_seconds: int = 3600
    file_size_mb: int = 1024
    max_processes: int = 64
    step_timeout_seconds: float = 120.0
    output_chars: int = 20_000
    idle_seconds: float = 900.0
    disk_mb: int = 5120
    max_artifacts: int = 50
    artifact_mb: int = 1024

    @property
    def tmpfs_mb(self) -> tuple[int, int]:
        """Sizes of the sandbox's private /tmp and /dev/shm: memory outside RLIMIT_AS, so small."""
        return min(64, self.memory_mb // 32), min(16, self.memory_mb // 128)

    @property
    def process_memory_mb(self) -> int:
        """The worker process's address-space limit (the tmpfs sizes come on top)."""
        return self.memory_mb


@dataclass(frozen=True)
class SandboxStatus:
    """Whether analysis code can run, and how it is isolated (for /readyz, the UI and 503s).

    Attributes:
        isolation: SANDBOX_ISOLATION: "required" or "none".
        mechanism: "bubblewrap", "rlimits" (limits only), or None when no sandbox can run.
        location: "backend" (workers are the backend's children) or "service".
        available: Questions can be answered.
        isolated: Code runs in an isolated sandbox (not merely under limits).
        detail: A sentence for operators and users.
        fix: What to do about it when not available or not isolated.
        seccomp: The system calls the filter refuses (empty when there is no filter).
    """

    isolation: str
    mechanism: str | None
    location: str
    available: bool
    isolated: bool
    detail: str
    fix: str | None = None
    seccomp: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArtifactFile:
    """A chart, table or file produced by a step; its bytes are on the host at `path`.

    Attributes:
        kind: "plotly" (figure JSON), "image", "table" (JSON rows) or "file".
        name: Display name, e.g. "figure-1.json", or the workspace-relative name of a written file.
        mime: Media type of the bytes.
        path: Absolute host path of the bytes, inside the workspace.
        size: Size in bytes.
    """

    kind: ArtifactKind
    name: str
    mime: str
    path: Path
    size: int


def out_of_memory_advice(memory_mb: int) -> str:
    """What the agent is told when a step ran out of memory (a MemoryError in the worker,
    or the worker killed at its limit): how to read a file bigger than memory instead."""
    return (
        f"The step ran out of memory (limit {memory_mb} MB). Do not load a big file whole: "
        "query it with DuckDB, which reads CSV and Parquet files of any size without "
        'loading them, e.g. import duckdb; duckdb.sql("SELECT region, sum(amount) AS total '
        "FROM 'sales.csv' GROUP BY 1\").df() (only the small result becomes a DataFrame). "
        "With pandas, read only the columns you need (usecols=[...]) or in chunks "
        "(chunksize=...) and aggregate as you go."
    )


# The longest question a step may ask the user (ask_user).
QUESTION_CHARS = 2000
# How the error of a step that tried something the sandbox refuses begins (the step fails
# even if its code caught the refusal; exports leave such steps out).
REFUSED_PREFIX = "The sandbox refused what this step tried"


@dataclass(frozen=True)
class UserQuestion:
    """What a step's code asked with ask_user(...): the run waits for the user's answer."""

    question: str

    def __str__(self) -> str:
        return "(waiting for the user's answer)"


@dataclass(frozen=True)
class CodeForApproval:
    """Code the agent wrote in review mode: it has not run; the run waits for the user."""

    code: str

    def __str__(self) -> str:
        return "(waiting for the user's approval)"


@dataclass(frozen=True)
class AskedAt:
    """Where a step that asked the user stopped (app/sandbox/worker/asking.py).

    Attributes:
        statement: Which top-level statement of the code asked.
        answered: How many ask_user calls of that statement returned an answer before.
        from_start: The variables were put back as they were before the step: it runs again
            from its start.
        given: How many ask_user calls of the step returned an answer before.
    """

    statement: int
    answered: int
    from_start: bool
    given: int


@dataclass(frozen=True)
class StepResult:
    """What one code step produced.

    Attributes:
        output: The code's last value as text, or the final answer rendered as text.
        is_final_answer: The code called final_answer(...).
        logs: Everything the step printed, in order (print, library output, warnings), capped.
        error: The error the agent should see, or None on success.
        artifacts: Charts, tables and files the step produced.
        duration_ms: Wall-clock time of the step as the backend saw it.
        timed_out: The step hit the wall-clock limit and the worker was killed.
        crashed: The worker died during the step (for example killed for memory).
        question: The code called ask_user(question): the run waits for the user's answer.
        asked_at: With a question: where the step goes on once it is answered.
        queries: The queries the step's code ran on the project's data sources (`sql()`).
        reads: The names of the workspace's files its code read, as the kernel saw them
            (checked and bounded, not yet matched with the project's files); None when the
            worker could not watch (no inotify instance left) or the step never ran.
    """

    output: str | None
    is_final_answer: bool
    logs: str
    error: str | None
    artifacts: list[ArtifactFile]
    duration_ms: int
    timed_out: bool = False
    crashed: bool = False
    question: str | None = None
    asked_at: AskedAt | None = None
    queries: tuple[dict[str, Any], ...] = ()
    reads: tuple[str, ...] | None = None


def cap_text(text: str, limit: int) -> str:
    """Keep the head and the tail of a text so that the result has at most `limit` characters.

    Args:
        text: The text to cap.
        limit: Maximum length of the result.

    Returns:
        The text itself, or its head and tail around a line saying how much was cut.
    """
    if len(text) <= limit:
        return text
    return join_head_tail(text, text, limit, lambda kept: f"{len(text) - kept} characters")


def join_head_tail(head: str, tail: str, limit: int, describe_cut: Any) -> str:
    # The marker's length depends on the number it carries; size it for the largest number.
    widest = f"\n[... {describe_cut(0)} of output cut ...]\n"
    budget = max(limit - len(widest), 0)
    keep_head = budget // 2
    keep_tail = budget - keep_head
    kept_head = head[:keep_head]
    kept_tail = tail[len(tail) - keep_tail :] if keep_tail else ""
    return (
        f"{kept_head}\n[... {describe_cut(len(kept_head) + len(kept_tail))} of output cut ...]\n"
        f"{kept_tail}"
    )

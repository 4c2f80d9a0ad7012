"""What the user reads when a run does not succeed: each cause, worded once."""

from __future__ import annotations

from collections.abc import Callable

from redis.exceptions import RedisError
from smolagents.utils import AgentGenerationError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.agent.build import MaxStepsReached
from app.agent.calls import CallLimits, ModelFailed
from app.models import RunStatus
from app.runs.errors import BudgetExceeded
from app.runs.state import RunCancelled
from app.sandbox import SandboxUnavailable

STOPPED = "Stopped by the user."
INTERRUPTED = "This run was interrupted: the server running it stopped. Ask again."
SUSPEND_FAILED = (
    "The run could not wait for your answer: the database did not take its state. Ask again."
)
INPUT_TIMED_OUT = (
    "Nobody answered the agent's question within {time}, so the run was stopped. Ask again."
)


class StorageFailed(Exception):
    """Object storage failed while a run stored what a step made."""


class CellFailed(Exception):
    """A cell's code failed (its step carries the error; the run says so in a sentence)."""


def input_timed_out(timeout: float) -> str:
    return INPUT_TIMED_OUT.format(
        time=f"{timeout / 3600:g} hours" if timeout >= 3600 else f"{timeout:g} seconds"
    )


# What ends a run for a reason the user is told as it is (anything else is logged as a bug).
EXPECTED = (
    RunCancelled,
    BudgetExceeded,
    MaxStepsReached,
    SandboxUnavailable,
    ModelFailed,
    AgentGenerationError,
    CellFailed,
)


def ended_by(exc: Exception, limits: Callable[[], CallLimits]) -> tuple[RunStatus, str]:
    """The status and error of a run that `exc` ended (`limits`: its model's, which word a
    failed model call)."""
    if isinstance(exc, RunCancelled):
        return RunStatus.cancelled, STOPPED
    if isinstance(exc, BudgetExceeded | MaxStepsReached | ModelFailed | CellFailed):
        return RunStatus.failed, str(exc)  # already a sentence with the cause (and the fix)
    if isinstance(exc, SandboxUnavailable):  # e.g. the sandbox service went away since start
        return RunStatus.failed, f"Analysis is disabled: {exc}"
    if isinstance(exc, AgentGenerationError):
        return RunStatus.failed, limits().failure(exc.__cause__ or exc)
    return RunStatus.failed, _failure_message(exc)


def _failure_message(exc: Exception) -> str:
    """What the user reads when a run fails for a reason of the server's: which service."""
    if isinstance(exc, StorageFailed):
        return str(exc)
    if isinstance(exc, RedisError):
        return (
            "Redis (session locks and live events) stopped answering, so the run was stopped. "
            f"Ask again once it is back. ({type(exc).__name__}: {exc})"
        )
    if isinstance(exc, DBAPIError | PoolTimeout | ConnectionError):
        return (
            "The database stopped answering, so the run was stopped. Ask again once it is "
            f"back. ({type(exc).__name__}: {exc})"
        )
    return f"The run failed: {type(exc).__name__}: {exc}"

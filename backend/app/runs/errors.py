"""Why a question or a reply is refused, as types the API answers (app.api.errors)."""

from __future__ import annotations

from app.errors import AppError


class RunNotFound(AppError):
    """No such run or artifact, or another user's (the same answer: it is not revealed)."""


class SessionBusy(AppError):
    """The session is answering another question, or one waits for the user."""

    def __init__(self, detail: str):
        super().__init__(detail, code="session_busy")


class NotWaiting(AppError):
    """A reply to a run that does not wait for one (not_waiting_input or _approval)."""


class UnknownFiles(AppError):
    """The question names files that are not in its session's project."""

    def __init__(self, missing: list[str]):
        super().__init__(
            f"These files are not in this session's project: {', '.join(missing)}.",
            code="unknown_file",
        )


class AnalysisDisabled(AppError):
    """No sandbox can run the agent's code (the cause and its fix are in the sentence)."""


class BudgetExceeded(AppError):
    """The project's budget is spent: no question is taken, and a run that crosses it stops
    at its next step boundary (with this sentence as its error)."""

    def __init__(self, detail: str):
        super().__init__(detail, code="budget_exceeded")

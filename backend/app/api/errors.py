"""The status each refusal of the domain answers with: the one place that maps them.

Their body is `{"detail", "code"}` as for every error (app.errors).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.agent.model import ModelNotOffered
from app.errors import DomainError, error_body
from app.runs.errors import (
    AnalysisDisabled,
    BudgetExceeded,
    NotWaiting,
    RunNotFound,
    SessionBusy,
    UnknownFiles,
)

STATUS: dict[type[DomainError], int] = {
    ModelNotOffered: 400,
    UnknownFiles: 400,
    BudgetExceeded: 403,
    RunNotFound: 404,
    SessionBusy: 409,
    NotWaiting: 409,
    AnalysisDisabled: 503,
}


def install_domain_errors(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def _refused(_: Request, exc: DomainError) -> JSONResponse:
        status = next((STATUS[k] for k in type(exc).__mro__ if k in STATUS), 500)
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else {}
        return JSONResponse(error_body(exc.detail, exc.code), status, headers=headers)

"""Every error a request can end with, rendered as `{"detail", "code"}`: the one place that
gives each kind of refusal (app.errors.AppError and its kinds, raised below the API) its
HTTP status, and the answers to what else can go wrong (validation, backing services down,
anything unexpected).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.agent.model import ModelNotOffered
from app.errors import (
    AppError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    ServerFault,
    ServiceUnavailable,
    TooManyRequests,
    Unauthorized,
    Unprocessable,
    UnsupportedMediaType,
)
from app.files.preview.errors import PreviewError, PreviewUnsupported, SheetNotFound
from app.files.preview_process import PreviewsBusy
from app.observability import metrics
from app.runs.errors import (
    AnalysisDisabled,
    BudgetExceeded,
    NotWaiting,
    RunNotFound,
    SessionBusy,
    UnknownFiles,
)

log = logging.getLogger(__name__)

# Seconds a client is asked to wait before trying again after a 503 of a backing service.
RETRY_AFTER_SECONDS = 5

# The status of each kind of refusal; a kind not here answers as its nearest base does.
STATUS: dict[type[AppError], int] = {
    AppError: 400,
    BadRequest: 400,
    ModelNotOffered: 400,
    UnknownFiles: 400,
    Unauthorized: 401,
    Forbidden: 403,
    BudgetExceeded: 403,
    NotFound: 404,
    RunNotFound: 404,
    SheetNotFound: 404,
    Conflict: 409,
    SessionBusy: 409,
    NotWaiting: 409,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    PreviewUnsupported: 415,
    Unprocessable: 422,
    PreviewError: 422,
    TooManyRequests: 429,
    ServerFault: 500,
    ServiceUnavailable: 503,
    AnalysisDisabled: 503,
    PreviewsBusy: 503,
}


def status_of(error: AppError) -> int:
    return next(STATUS[kind] for kind in type(error).__mro__ if kind in STATUS)


def error_body(detail: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"detail": detail, "code": code, **extra}


def _validation_sentence(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "Invalid request: " + "; ".join(parts)


def _unavailable(body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, 503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _refused(_: Request, exc: AppError) -> JSONResponse:
        status = status_of(exc)
        if status == 429:
            metrics.RATE_LIMITED.labels(exc.code).inc()
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
        if exc.retry_after is not None:
            headers["Retry-After"] = str(exc.retry_after)
        return JSONResponse(error_body(exc.detail, exc.code), status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        if all(e.get("loc", ("",))[0] == "path" for e in exc.errors()):
            # A malformed id names nothing that exists: the same answer as an unknown id.
            return JSONResponse(error_body("Not found.", "not_found"), 404)
        errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        body = error_body(_validation_sentence(exc), "validation_error", errors=errors)
        return JSONResponse(body, 422)

    @app.exception_handler(DBAPIError)
    async def _database(request: Request, exc: DBAPIError) -> JSONResponse:
        if isinstance(exc, OperationalError | InterfaceError) or exc.connection_invalidated:
            log.error(
                "database unavailable on %s %s: %s", request.method, request.url.path, exc.orig
            )
            body = error_body(
                "The database is not answering; try again shortly.", "database_unavailable"
            )
            return _unavailable(body)
        return await _unexpected(request, exc)

    @app.exception_handler(PoolTimeout)
    async def _pool_exhausted(request: Request, exc: PoolTimeout) -> JSONResponse:
        # Every connection of the pool stayed busy for DATABASE_POOL_TIMEOUT_SECONDS.
        log.warning("database pool exhausted on %s %s", request.method, request.url.path)
        body = error_body(
            "The server is busy (all database connections are in use); try again shortly.",
            "server_busy",
        )
        return _unavailable(body)

    @app.exception_handler(OSError)
    async def _connection(request: Request, exc: OSError) -> JSONResponse:
        # asyncpg raises plain OSErrors (connection refused or reset) when it cannot connect.
        log.error(
            "a backing service is unreachable on %s %s: %r", request.method, request.url.path, exc
        )
        body = error_body(
            "A backing service is not answering; try again shortly.", "service_unavailable"
        )
        return _unavailable(body)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(
            error_body("Something went wrong on the server; it was logged.", "internal_error"), 500
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(error_body(str(exc.detail), code), exc.status_code, headers=exc.headers)

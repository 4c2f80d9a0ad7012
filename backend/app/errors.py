"""Errors that carry their HTTP status and machine code, rendered as `{"detail", "code"}`."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

# Seconds a client is asked to wait before trying again after a 503 of a backing service.
RETRY_AFTER_SECONDS = 5


class AppError(Exception):
    status: ClassVar[int] = 400
    code: ClassVar[str] = "bad_request"
    # Seconds a client should wait before trying again (a Retry-After header), if any.
    retry_after: int | None = None

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        status: int | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(detail)
        self.detail = detail
        if retry_after is not None:
            self.retry_after = retry_after
        if code is not None:
            self.code = code  # type: ignore[misc]
        if status is not None:
            self.status = status  # type: ignore[misc]


class DomainError(Exception):
    """A refusal decided below the API (a run's admission, its budget, its model): a
    sentence for the user and a machine code. The API gives each kind its status
    (app.api.errors); the domain knows nothing of HTTP."""

    def __init__(self, detail: str, *, code: str, retry_after: int | None = None):
        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.retry_after = retry_after


class BadRequest(AppError):
    status = 400
    code = "bad_request"


class Unauthorized(AppError):
    status = 401
    code = "not_authenticated"


class Forbidden(AppError):
    status = 403
    code = "forbidden"


class NotFound(AppError):
    status = 404
    code = "not_found"


class Conflict(AppError):
    status = 409
    code = "conflict"


class PayloadTooLarge(AppError):
    status = 413
    code = "file_too_large"


class UnsupportedMediaType(AppError):
    status = 415
    code = "unsupported_file_type"


class Unprocessable(AppError):
    status = 422
    code = "unprocessable"


class ServiceUnavailable(AppError):
    status = 503
    code = "service_unavailable"


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
    async def _app_error(_: Request, exc: AppError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        if exc.retry_after is not None:
            headers["Retry-After"] = str(exc.retry_after)
        return JSONResponse(error_body(exc.detail, exc.code), exc.status, headers=headers)

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

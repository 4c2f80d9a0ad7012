"""Refusals: AppError and its kinds, raised anywhere below the API, which knows nothing of
HTTP. The API renders them as `{"detail", "code"}` with the status of their kind
(app.api.errors)."""

from __future__ import annotations

from typing import Any, ClassVar


class AppError(Exception):
    """A refusal decided below the API: a sentence for the user and a machine code.

    What kind of refusal it is (its class) is all the code below the API says: the API
    gives each kind its HTTP status in one table (app.api.errors).
    """

    code: ClassVar[str] = "bad_request"
    # Seconds a client should wait before trying again (a Retry-After header), if any.
    retry_after: int | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "status" in vars(cls):
            raise TypeError(
                f"{cls.__name__}: a kind of refusal has no HTTP status of its own; give it one "
                "in app.api.errors.STATUS"
            )

    def __init__(self, detail: str, *, code: str | None = None, retry_after: int | None = None):
        super().__init__(detail)
        self.detail = detail
        if retry_after is not None:
            self.retry_after = retry_after
        if code is not None:
            self.code = code  # type: ignore[misc]


class BadRequest(AppError):
    """What was asked cannot be done as asked."""

    code = "bad_request"


class Unauthorized(AppError):
    """No valid login or token."""

    code = "not_authenticated"


class Forbidden(AppError):
    """Known, but not allowed to do this."""

    code = "forbidden"


class NotFound(AppError):
    """No such thing, or another user's (the same answer: it is not revealed)."""

    code = "not_found"


class Conflict(AppError):
    """It clashes with the state things are in (a name taken, a run not waiting…)."""

    code = "conflict"


class PayloadTooLarge(AppError):
    """What was sent is bigger than allowed."""

    code = "file_too_large"


class UnsupportedMediaType(AppError):
    """A kind of file that is not taken."""

    code = "unsupported_file_type"


class Unprocessable(AppError):
    """Well-formed, but its content cannot be used."""

    code = "unprocessable"


class TooManyRequests(AppError):
    """Too many attempts: wait (retry_after) before the next."""

    code = "rate_limited"


class ServiceUnavailable(AppError):
    """A backing service is not answering; the same request may work shortly."""

    code = "service_unavailable"


class ServerFault(AppError):
    """Something on the server went wrong in a way the user is told about (nothing lost)."""

    code = "internal_error"

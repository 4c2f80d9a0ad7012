"""The NUL character refused in what a client sends, before anything is stored.

PostgreSQL cannot keep it in text (a name carrying it answered 500 there and was stored as
given in SQLite), and no name, question or description needs it. JSON carries it only as
the escape `\\u0000` (a raw NUL byte is not JSON at all), and a query string as `%00`; both
are refused with 422 `nul_character` on every stack alike. File uploads (multipart) are not
JSON and keep their own checks.
"""

from __future__ import annotations

import re

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import error_body

DETAIL = "Text may not contain the NUL character (\\u0000)."
# A run of backslashes before u0000: an escape when the run is odd (an even run is escaped
# backslashes followed by the plain text "u0000").
_ESCAPE = re.compile(rb"(\\+)u0000")


def has_nul_escape(body: bytes | bytearray) -> bool:
    """Whether a JSON text holds a string with NUL in it (the escape `\\u0000`)."""
    if b"u0000" not in body:
        return False
    return any(len(found.group(1)) % 2 == 1 for found in _ESCAPE.finditer(body))


def _is_json(scope: Scope) -> bool:
    kind = Headers(scope=scope).get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


class NulGuard:
    """Pure ASGI middleware: 422 `nul_character` for a query string with `%00` or a JSON
    body with `\\u0000`. The body is looked at once it has all arrived (its size is already
    bounded by app.api.limits); the app, which reads a JSON body whole before acting on
    it, then sees the client as gone, and whatever it answers is replaced by the 422."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if b"%00" in scope.get("query_string", b""):
            await _refuse(scope, receive, send)
            return
        if not _is_json(scope):
            await self.app(scope, receive, send)
            return

        body = bytearray()
        refused = False
        started = False

        async def guarded_receive() -> Message:
            nonlocal refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False) and has_nul_escape(body):
                    refused = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused and not started:
                return  # the app's answer to a body it never got whole; the 422 goes out
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, guarded_receive, guarded_send)
        if refused and not started:
            await _refuse(scope, receive, send)


async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:
    await JSONResponse(error_body(DETAIL, "nul_character"), 422)(scope, receive, send)


def install_nul_guard(app: FastAPI) -> None:
    """Refuse NUL characters in JSON bodies and query strings with 422."""
    app.add_middleware(NulGuard)

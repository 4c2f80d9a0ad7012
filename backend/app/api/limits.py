"""A size limit on request bodies, enforced while they arrive.

Without it a client can make the server read and parse a body of any size (a 60 MB JSON
document is parsed in full before validation refuses it). Uploads are exempt: their route
streams the file to storage under MAX_UPLOAD_BYTES.
"""

from __future__ import annotations

import re

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import error_body

# POST /api/v1/projects/{project_id}/files: the multipart upload, limited by its route.
_UPLOAD_PATH = re.compile(r"/api/v1/projects/[^/]+/files/?$")


class BodySizeLimit:
    """Pure ASGI middleware: 413 `body_too_large` for a body over `max_bytes`.

    A declared Content-Length over the limit is refused before the body is read. A body
    without one (chunked) is counted as it streams; once it passes the limit the app sees
    the client as gone, and whatever it answers is replaced by the 413.

    Args:
        app: The application to protect.
        max_bytes: The largest body allowed.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _exempt(scope):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return

        received = 0
        too_large = False
        started = False

        async def counted_receive() -> Message:
            nonlocal received, too_large
            if too_large:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    too_large = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if too_large and not started:
                return  # the app's answer to a cut-off body; the 413 goes out instead
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted_receive, guarded_send)
        if too_large and not started:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = error_body(
            f"The request body is larger than the limit of {self.max_bytes:,} bytes.",
            "body_too_large",
        )
        # Close the connection: the rest of the body is not read.
        await JSONResponse(body, 413, headers={"Connection": "close"})(scope, receive, send)


def _exempt(scope: Scope) -> bool:
    return scope["method"] == "POST" and _UPLOAD_PATH.search(scope["path"]) is not None


def install_body_limit(app: FastAPI, max_bytes: int) -> None:
    """Refuse request bodies over `max_bytes` with 413, except file uploads.

    Args:
        app: The application; call before it serves its first request.
        max_bytes: The largest body allowed (settings.MAX_JSON_BODY_BYTES).
    """
    app.add_middleware(BodySizeLimit, max_bytes=max_bytes)

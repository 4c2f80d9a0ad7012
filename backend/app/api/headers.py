"""Security headers: a Content-Security-Policy and the usual hardening on every response.

The SPA is strict (no inline or evaluated script); the API documentation page keeps working
with the Swagger UI that FastAPI loads from its CDN, and only that page may load from there.
Stored bytes (uploads, artifacts) are served by `stored_bytes_headers`: sandboxed, never
sniffed, and downloaded rather than shown unless their type cannot run script.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable
from urllib.parse import quote

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.sandbox import PLOTLY_MIME

APP_CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        # Plotly, Radix and the toasts set inline styles and add <style> elements at run time.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        # Plotly's map traces start their MapLibre worker from a blob: URL.
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": ", ".join(
        f"{feature}=()"
        for feature in (
            "accelerometer",
            "camera",
            "display-capture",
            "geolocation",
            "gyroscope",
            "magnetometer",
            "microphone",
            "midi",
            "payment",
            "usb",
            "serial",
            "hid",
            "browsing-topics",
        )
    ),
}

# What served bytes may do if a browser ever renders them itself: nothing.
STORED_BYTES_CSP = "sandbox; default-src 'none'"
# Types a browser shows without running anything; all others are served as downloads.
INLINE_MEDIA_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "application/json", PLOTLY_MIME}
)
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_csp(body: bytes) -> str:
    """A documentation page's policy: its own assets, and exactly the inline scripts it carries."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
        for script in _INLINE_SCRIPT.findall(body)
    )
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src 'self' {hashes}".rstrip(),
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self' data:",
            "connect-src 'self'",
            # ReDoc builds its search index in a worker started from a blob: URL.
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


class SecurityHeaders:
    """Pure ASGI middleware: adds the headers to every HTTP response that lacks them."""

    def __init__(self, app: ASGIApp, docs_paths: frozenset[str]) -> None:
        self.app = app
        self.docs_paths = docs_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope["path"] in self.docs_paths:
            await self._docs(scope, receive, send)
        else:

            async def send_with_headers(message: Message) -> None:
                if message["type"] == "http.response.start":
                    _add_headers(message, APP_CSP)
                await send(message)

            await self.app(scope, receive, send_with_headers)

    async def _docs(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The page is small: hold it whole to hash its inline scripts into the policy.
        start: Message | None = None
        body = bytearray()

        async def buffered(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                _add_headers(start, docs_csp(bytes(body)))
                await send(start)
                await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, buffered)


def _add_headers(start: Message, csp: str) -> None:
    headers = MutableHeaders(scope=start)
    # A response that set its own policy (stored bytes) keeps it.
    headers.setdefault("Content-Security-Policy", csp)
    for name, value in COMMON_HEADERS.items():
        headers.setdefault(name, value)


def install_security_headers(app: FastAPI, docs_paths: Iterable[str] = ()) -> None:
    """Add the security headers to every response of `app`, errors included.

    Starlette puts user middleware inside the ServerErrorMiddleware that renders unhandled
    errors as 500, so the headers wrap the whole built stack instead.

    Args:
        app: The application; call before it serves its first request.
        docs_paths: The documentation pages (they get a policy of their own).
    """
    pages = frozenset(docs_paths)
    build: Callable[[], ASGIApp] = app.build_middleware_stack

    def build_with_headers() -> ASGIApp:
        return SecurityHeaders(build(), pages)

    app.build_middleware_stack = build_with_headers  # type: ignore[method-assign]


def stored_bytes_headers(
    name: str, media_type: str, *, inline: bool = True
) -> tuple[str, dict[str, str]]:
    """How to serve stored bytes (an upload, an artifact) on the app's own origin.

    The media type is not trusted (an artifact's comes from the sandbox): anything that is
    not a plain image or JSON is a download, and nothing is ever sniffed or run.

    Args:
        name: The file name the user sees; any characters.
        media_type: The recorded media type.
        inline: Whether a plain image or JSON may be shown in place (False: always a download).

    Returns:
        The media type to send and the headers to send with it.
    """
    media = media_type.split(";", 1)[0].strip().lower()
    if not _MEDIA_TYPE.fullmatch(media):
        media = "application/octet-stream"
    disposition = "inline" if inline and media in INLINE_MEDIA_TYPES else "attachment"
    return media, {
        "Content-Disposition": f"{disposition}; {filename_parameters(name)}",
        "Content-Security-Policy": STORED_BYTES_CSP,
        "X-Content-Type-Options": "nosniff",
    }


def filename_parameters(name: str) -> str:
    """`filename="<ASCII fallback>"; filename*=UTF-8''<RFC 5987 encoding>` for any name."""
    fallback = "".join(c if " " <= c <= "~" and c not in '"\\%;' else "_" for c in name)
    return f"filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def shared_report_headers(report_policy: str) -> dict[str, str]:
    """How a shared link's report is served on the app's own origin, to anyone.

    Its policy is the report's own (only the report's scripts run, by nonce; nothing is
    fetched), in a sandbox: the page has an opaque origin, so even a script that got in
    could not read what the app keeps in the browser or call the API as its user. It is
    never framed, cached (a revoked link shows nothing, even from a cache) or indexed.

    Args:
        report_policy: The policy the report carries in its <meta> (the same nonce).
    """
    return {
        "Content-Security-Policy": "; ".join(
            (
                report_policy,
                "base-uri 'none'",
                "form-action 'none'",
                "frame-ancestors 'none'",
                # Charts are drawn by script; attachments are downloads; a link may open a tab.
                "sandbox allow-scripts allow-downloads allow-popups allow-popups-to-escape-sandbox",
            )
        ),
        "Cache-Control": "no-store",
        "X-Robots-Tag": "noindex, nofollow",
    }


def dead_link_headers() -> dict[str, str]:
    """The page a browser gets for a shared link that opens nothing: its own fixed text and
    style, nothing else loads or runs."""
    return {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        "Cache-Control": "no-store",
        "X-Robots-Tag": "noindex, nofollow",
    }

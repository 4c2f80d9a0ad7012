"""A real HTTP proxy in front of the test OpenID provider that swaps the ID token of its
token answers: it serves the provider's discovery document as its own (issuer and
token_endpoint rewritten to itself), forwards every other request, and hands the workbench
an ID token the test signed instead of the provider's. That proves the callback itself, over
HTTP, refuses a bad token, not only the verification function."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tests.support.services import free_port

# Given the claims of the provider's own ID token (its nonce, for one), the token to hand over.
Swap = Callable[[dict[str, Any]], str]


class IdTokenSwapProxy:
    def __init__(self, upstream: str, swap: Swap) -> None:
        self.upstream = upstream.rstrip("/")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.swap = swap
        self.swapped = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                answer = httpx.get(f"{proxy.upstream}{self.path}", timeout=30)
                body = answer.content
                if self.path.startswith("/.well-known/openid-configuration"):
                    found = answer.json()
                    proxy.token_endpoint = found["token_endpoint"]
                    found |= {"issuer": proxy.url, "token_endpoint": f"{proxy.url}/token"}
                    body = json.dumps(found).encode()
                self._send(answer.status_code, answer.headers.get("content-type", ""), body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() in {"authorization", "content-type", "accept"}
                }
                answer = httpx.post(
                    proxy.token_endpoint if self.path == "/token" else proxy.upstream + self.path,
                    content=self.rfile.read(length),
                    headers=headers,
                    timeout=30,
                )
                body = answer.content
                if self.path == "/token" and answer.status_code == 200:
                    tokens = answer.json()
                    # The provider's own claims, read only for what the test's token echoes
                    # (the nonce of this sign-in); its signature is not the point here.
                    claims = _payload(tokens["id_token"])
                    tokens["id_token"] = proxy.swap(claims)
                    proxy.swapped += 1
                    body = json.dumps(tokens).encode()
                self._send(answer.status_code, answer.headers.get("content-type", ""), body)

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type or "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.token_endpoint = f"{self.upstream}/token"
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> IdTokenSwapProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def _payload(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return claims

"""A real OpenID Connect provider for the tests: npm oidc-provider (a devDependency of the
frontend, installed by `npm ci`), run with node by tests/support/oidc_provider.mjs, signing
with a key this module made, so that tests can also sign tokens of their own with it (or
with another key) to prove what the workbench refuses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from tests.support.services import free_port

REPO = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")
MODULE = REPO / "frontend" / "node_modules" / "oidc-provider" / "lib" / "index.js"
KID = "workbench-test-key"
CLIENT_ID = "workbench"
CLIENT_SECRET = "a-client-secret-for-the-tests-only"


def new_key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": KID, "use": "sig", "alg": "RS256"})


class OidcTestProvider:
    """The provider, started on a free port for a client whose redirect URI is given."""

    def __init__(self, redirect_uri: str) -> None:
        if not MODULE.exists():
            raise RuntimeError(f"{MODULE} is missing: run `npm ci` in frontend/ first")
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.key = new_key()
        self.redirect_uri = redirect_uri
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> OidcTestProvider:
        config = {
            "issuer": self.issuer,
            "port": self.port,
            "jwks": KeySet([self.key]).as_dict(private=True),
            "client": {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": [self.redirect_uri],
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            },
        }
        env = {
            **os.environ,
            "OIDC_TEST_CONFIG": json.dumps(config),
            "OIDC_PROVIDER_MODULE": str(MODULE),
            "NODE_ENV": "test",
        }
        self.process = subprocess.Popen(
            ["node", str(SCRIPT)], env=env, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("listening"):
            self.stop()
            raise RuntimeError(f"the OpenID provider did not start: {line!r}")
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def sign(self, claims: dict[str, Any], key: RSAKey | None = None) -> str:
        """An ID token of the test's own, signed with the provider's key (or `key`)."""
        return jwt.encode({"alg": "RS256", "kid": KID}, claims, key or self.key)

    def claims(self, nonce: str, **more: Any) -> dict[str, Any]:
        now = int(time.time())
        return {
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "sub": "someone@corp.example",
            "email": "someone@corp.example",
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
        } | more


_FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')


def sign_in(client: httpx.Client, start: str, login: str, stop_at: str) -> tuple[str, list[str]]:
    """Go through the provider's login and consent pages as a browser would, from the
    workbench's `start` URL, until a redirect to a URL starting with `stop_at`.

    Returns:
        That URL, and every URL visited on the way (the callback's among them).
    """
    visited: list[str] = []
    response = client.get(start)
    for _ in range(20):
        visited.append(str(response.url))
        if response.is_redirect:
            target = urljoin(str(response.url), response.headers["location"])
            if target.startswith(stop_at):
                return target, visited
            response = client.get(target)
            continue
        form = _FORM.search(response.text)
        assert response.status_code == 200 and form, (response.status_code, response.text[:500])
        action, inner = urljoin(str(response.url), unescape(form.group(1))), form.group(2)
        data = {name: unescape(value) for name, value in _HIDDEN.findall(inner)}
        if data.get("prompt") == "login":
            data |= {"login": login, "password": "any password"}
        response = client.post(action, data=data)
    raise AssertionError(f"the sign-in never came back: {visited}")

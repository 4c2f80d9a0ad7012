"""OpenID Connect sign-in against the provider of the settings (OIDC_*): its metadata and
keys (read from its discovery document, kept a while), the authorization URL with PKCE,
the code exchange (Authlib's OAuth 2 client), and the ID token's checks (joserfc, which
Authlib uses): signature against the provider's keys, issuer, audience, expiry, nonce.

Every refusal is an OidcRefused with a sentence for the person signing in.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import httpx
from authlib.deprecate import AuthlibDeprecationWarning
from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    InvalidKeyIdError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

from app.config import Settings

# Authlib 1.9 warns at import that it would rather drive `httpx2` than `httpx`; the
# workbench uses httpx everywhere, which Authlib still supports.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.integrations.httpx_client import AsyncOAuth2Client

# How long the provider's discovery document and keys are kept before they are read again
# (a token signed with a key not yet known reads the keys again at once).
METADATA_TTL_SECONDS = 3600
HTTP_TIMEOUT_SECONDS = 10
# Clock skew allowed between the provider and this server.
LEEWAY_SECONDS = 60
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]


class OidcRefused(Exception):
    """The sign-in is refused; the message is a sentence for the person signing in."""


def verify_id_token(
    id_token: str, keys: KeySet, issuer: str, client_id: str, nonce: str
) -> dict[str, Any]:
    """The claims of an ID token, once its signature, issuer, audience, expiry and nonce hold.

    Raises:
        OidcRefused: with a sentence naming what failed.
    """
    try:
        token = jwt.decode(id_token, keys, algorithms=ALGORITHMS)
    except (BadSignatureError, InvalidKeyIdError):
        raise OidcRefused(
            "The sign-in was refused: the ID token is not signed by the provider's keys."
        ) from None
    except (JoseError, ValueError):
        raise OidcRefused("The sign-in was refused: the ID token cannot be read.") from None
    claims = token.claims
    registry = jwt.JWTClaimsRegistry(
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        exp={"essential": True},
        sub={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except ExpiredTokenError:
        raise OidcRefused("The sign-in was refused: the ID token has expired.") from None
    except (InvalidClaimError, MissingClaimError) as exc:
        raise OidcRefused(_claim_sentence(getattr(exc, "claim", ""))) from None
    except JoseError:
        raise OidcRefused("The sign-in was refused: the ID token is not valid.") from None
    # Several audiences: the token must be meant for this client (OpenID Connect core 3.1.3.7).
    audiences = claims.get("aud")
    if isinstance(audiences, list) and len(audiences) > 1 and claims.get("azp") != client_id:
        raise OidcRefused(_claim_sentence("azp"))
    return dict(claims)


def _claim_sentence(claim: str) -> str:
    what = {
        "iss": "it was issued by another provider",
        "aud": "it was issued for another application (audience)",
        "azp": "it was issued for another application (authorized party)",
        "nonce": "it does not belong to this sign-in (nonce)",
        "sub": "it names no user",
        "exp": "it has no expiry",
    }.get(claim, f"its claim {claim!r} is not right")
    return f"The sign-in was refused: the ID token is not valid here, {what}."


@dataclass
class OidcProvider:
    """The provider of the settings, its discovery document and keys kept a while."""

    issuer: str
    client_id: str
    client_secret: str | None
    scopes: str
    _metadata: dict[str, Any] | None = None
    _keys: KeySet | None = None
    _read_at: float = 0.0
    _keys_read_at: float = field(default=0.0)

    @classmethod
    def of(cls, settings: Settings) -> OidcProvider:
        assert settings.OIDC_ISSUER and settings.OIDC_CLIENT_ID  # checked at start-up
        return cls(
            settings.OIDC_ISSUER.rstrip("/"),
            settings.OIDC_CLIENT_ID,
            settings.OIDC_CLIENT_SECRET,
            settings.OIDC_SCOPES,
        )

    def same_as(self, settings: Settings) -> bool:
        return (self.issuer, self.client_id, self.client_secret, self.scopes) == (
            (settings.OIDC_ISSUER or "").rstrip("/"),
            settings.OIDC_CLIENT_ID,
            settings.OIDC_CLIENT_SECRET,
            settings.OIDC_SCOPES,
        )

    async def metadata(self) -> dict[str, Any]:
        if self._metadata is None or time.monotonic() - self._read_at > METADATA_TTL_SECONDS:
            url = f"{self.issuer}/.well-known/openid-configuration"
            found = await _get_json(url)
            if found.get("issuer", "").rstrip("/") != self.issuer:
                raise OidcRefused(
                    "Single sign-on is misconfigured: the provider's discovery document names "
                    f"another issuer than OIDC_ISSUER ({found.get('issuer')!r})."
                )
            self._metadata, self._read_at = found, time.monotonic()
        return self._metadata

    async def keys(self, refresh: bool = False) -> KeySet:
        stale = time.monotonic() - self._keys_read_at > METADATA_TTL_SECONDS
        if self._keys is None or refresh or stale:
            document = await _get_json(str((await self.metadata())["jwks_uri"]))
            try:
                self._keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
            except (JoseError, ValueError, KeyError):
                raise OidcRefused("The provider's keys (jwks_uri) cannot be read.") from None
            self._keys_read_at = time.monotonic()
        return self._keys

    def _client(self, redirect_uri: str) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=self.scopes,
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=HTTP_TIMEOUT_SECONDS,
        )

    async def authorization_url(
        self, redirect_uri: str, state: str, nonce: str, verifier: str
    ) -> str:
        endpoint = str((await self.metadata())["authorization_endpoint"])
        async with self._client(redirect_uri) as client:
            url, _ = client.create_authorization_url(
                endpoint, state=state, nonce=nonce, code_verifier=verifier
            )
        return str(url)

    async def id_token_for(
        self, code: str, verifier: str, redirect_uri: str, nonce: str
    ) -> dict[str, Any]:
        """Trade the code for tokens and return the verified claims of the ID token."""
        endpoint = str((await self.metadata())["token_endpoint"])
        try:
            async with self._client(redirect_uri) as client:
                tokens = await client.fetch_token(endpoint, code=code, code_verifier=verifier)
        except httpx.HTTPError:
            raise OidcRefused("The provider could not be reached to finish the sign-in.") from None
        except Exception as exc:  # Authlib's OAuthError and its kin: the provider said no
            raise OidcRefused(
                f"The provider refused to finish the sign-in: {_short(str(exc))}"
            ) from None
        id_token = tokens.get("id_token")
        if not isinstance(id_token, str):
            raise OidcRefused("The provider sent no ID token (is `openid` in OIDC_SCOPES?).")
        try:
            return verify_id_token(id_token, await self.keys(), self.issuer, self.client_id, nonce)
        except OidcRefused:
            # A key the provider rotated in since the keys were read: read them once more.
            fresh = await self.keys(refresh=True)
            return verify_id_token(id_token, fresh, self.issuer, self.client_id, nonce)


def _short(text: str) -> str:
    return " ".join(text.split())[:200]


async def _get_json(url: str) -> dict[str, Any]:
    try:
        async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_SECONDS) as client:
            response = await client.get(url)
            response.raise_for_status()
            found = response.json()
    except (httpx.HTTPError, ValueError):
        raise OidcRefused(f"The single sign-on provider cannot be reached ({url}).") from None
    if not isinstance(found, dict):
        raise OidcRefused(f"The single sign-on provider answered nonsense at {url}.")
    return found

"""Single sign-on (API.md, "Daily use III"): what the login page offers, the way to the
provider, the way back, and the trade of a one-time code for a login.

The login token never travels in a URL: the callback redirects the browser to the SPA's
/sso page with a one-time code in the fragment (which browsers never send to a server,
so no access log holds it), and the SPA trades it with POST /auth/oidc/exchange."""

from __future__ import annotations

import secrets
import uuid
from datetime import timedelta
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field

from app.api.deps import DbDep, SettingsDep
from app.auth import handoffs, service
from app.auth.oidc import OidcProvider, OidcRefused
from app.auth.schemas import LoginResponse, UserOut
from app.auth.sso import user_for_claims
from app.config import Settings
from app.errors import NotFound
from app.models import User

router = APIRouter(tags=["auth"])

# How long the provider may take to send the browser back, and the SPA to trade the code.
STATE_TTL = timedelta(minutes=10)
CODE_TTL = timedelta(minutes=1)


class OidcConfigOut(BaseModel):
    name: str = Field(description='The provider\'s name for the button ("Sign in with …")')


class AuthConfigOut(BaseModel):
    password_login: bool = Field(description="Whether the email and password form works")
    oidc: OidcConfigOut | None = Field(description="Single sign-on, when set up")


class CodeExchange(BaseModel):
    code: str = Field(max_length=128, description="The one-time code of the /sso page's fragment")


@router.get("/auth/config", response_model=AuthConfigOut)
async def auth_config(settings: SettingsDep) -> AuthConfigOut:
    """How people sign in here (no login needed): the login page shows what this says."""
    oidc = OidcConfigOut(name=settings.OIDC_NAME) if settings.OIDC_ISSUER else None
    return AuthConfigOut(password_login=settings.PASSWORD_LOGIN, oidc=oidc)


def get_provider(request: Request) -> OidcProvider:
    """The provider of the settings, kept on the app (its metadata and keys with it)."""
    settings: Settings = request.app.state.settings
    if not settings.OIDC_ISSUER:
        raise NotFound(
            "Single sign-on is not set up here (OIDC_ISSUER).", code="oidc_not_configured"
        )
    provider: OidcProvider | None = getattr(request.app.state, "oidc_provider", None)
    if provider is None or not provider.same_as(settings):
        provider = request.app.state.oidc_provider = OidcProvider.of(settings)
    return provider


ProviderDep = Annotated[OidcProvider, Depends(get_provider)]


def _base(settings: Settings, request: Request) -> str:
    return (settings.PUBLIC_URL or str(request.base_url)).rstrip("/")


def _callback_url(settings: Settings, request: Request) -> str:
    return _base(settings, request) + request.app.url_path_for("oidc_callback")


@router.get(
    "/auth/oidc/login",
    status_code=302,
    responses={302: {"description": "To the provider's sign-in page"}},
)
async def oidc_login(
    request: Request, db: DbDep, settings: SettingsDep, provider: ProviderDep
) -> RedirectResponse:
    """Start a sign-in at the provider: authorization code flow with PKCE (S256); the state,
    nonce and verifier are kept server-side, one-time, for ten minutes."""
    nonce = secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(48)
    state = await handoffs.put(db, "oidc_state", {"nonce": nonce, "verifier": verifier}, STATE_TTL)
    try:
        url = await provider.authorization_url(
            _callback_url(settings, request), state, nonce, verifier
        )
    except OidcRefused as exc:
        return _back(settings, request, error=str(exc))
    return RedirectResponse(url, status_code=302)


@router.get(
    "/auth/oidc/callback",
    status_code=302,
    responses={302: {"description": "To the SPA's /sso page: #code=… or #error=…"}},
)
async def oidc_callback(
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    provider: ProviderDep,
    code: Annotated[str | None, Query(max_length=2048)] = None,
    state: Annotated[str | None, Query(max_length=128)] = None,
    error: Annotated[str | None, Query(max_length=200)] = None,
    error_description: Annotated[str | None, Query(max_length=500)] = None,
) -> RedirectResponse:
    """Where the provider sends the browser back: the state is used up, the code traded,
    the ID token verified; the browser goes on to the SPA with a one-time code (or a
    sentence saying why not) in the URL's fragment."""
    found = await handoffs.take(db, "oidc_state", state or "")
    if found is None:
        return _back(
            settings,
            request,
            error="This sign-in was already used or has expired; start it again.",
        )
    if error or not code:
        said = error_description or error or "no code"
        return _back(settings, request, error=f"The provider did not sign you in: {said}.")
    try:
        claims = await provider.id_token_for(
            code, found["verifier"], _callback_url(settings, request), found["nonce"]
        )
        user = await user_for_claims(db, claims, settings)
    except OidcRefused as exc:
        return _back(settings, request, error=str(exc))
    key = await handoffs.put(db, "login_code", {"user_id": str(user.id)}, CODE_TTL)
    return _back(settings, request, code=key)


def _back(
    settings: Settings, request: Request, *, code: str | None = None, error: str | None = None
) -> RedirectResponse:
    fragment = f"code={code}" if code else f"error={quote(error or '')}"
    response = RedirectResponse(f"{_base(settings, request)}/sso#{fragment}", status_code=302)
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post(
    "/auth/oidc/exchange",
    response_model=LoginResponse,
    responses={404: {"description": "The code was used, has expired or is unknown"}},
)
async def oidc_exchange(body: CodeExchange, db: DbDep, settings: SettingsDep) -> LoginResponse:
    """Trade the one-time code of a finished single sign-on for a login (no login needed)."""
    found = await handoffs.take(db, "login_code", body.code)
    user = await db.get(User, uuid.UUID(found["user_id"])) if found else None
    if user is None or user.disabled:
        raise NotFound(
            "This sign-in code was already used or has expired; sign in again.",
            code="code_not_found",
        )
    ttl = timedelta(minutes=settings.ACCESS_TOKEN_TTL_MINUTES)
    login = service.issue_login(user, settings.signing_key, ttl)
    return LoginResponse(
        access_token=login.token, expires_at=login.expires_at, user=UserOut.model_validate(user)
    )

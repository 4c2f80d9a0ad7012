"""Single sign-on through OpenID Connect (issue 42, point 11), against a real provider
(npm oidc-provider, started once per module and stack; each test signs in with a browser of
its own): its login and consent pages are driven as a browser would; the ID tokens the test
signs itself (forged, expired, for another audience or another sign-in) are refused with a
sentence saying why, by the verification function and, through a real HTTP proxy that swaps
the provider's ID token for the test's, by the callback itself; a replayed state, a used
login code, a domain not allowed and an unverified email are refused too."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from app.auth.oidc import OidcProvider, OidcRefused, verify_id_token
from tests.api.test_auth import assert_error
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api
from tests.support.oidc import CLIENT_ID, CLIENT_SECRET, OidcTestProvider, new_key, sign_in
from tests.support.oidc_proxy import IdTokenSwapProxy
from tests.support.server import LiveServer


@pytest.fixture(scope="module")
def running_provider(server: LiveServer) -> Iterator[OidcTestProvider]:
    """One provider per module and stack: each test signs in with a browser (cookies) of its
    own, and the provider keeps nothing else between sign-ins."""
    started = OidcTestProvider(f"{server.url}/api/v1/auth/oidc/callback").start()
    yield started
    started.stop()


@pytest.fixture
def provider(
    live: LiveServer, running_provider: OidcTestProvider, monkeypatch: pytest.MonkeyPatch
) -> OidcTestProvider:
    """The workbench set to sign in through the module's provider, for one test."""
    started = running_provider
    for name, value in {
        "OIDC_ISSUER": started.issuer,
        "OIDC_CLIENT_ID": CLIENT_ID,
        "OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "OIDC_NAME": "Corp SSO",
        "OIDC_SCOPES": "openid email profile groups",
        "OIDC_ALLOWED_DOMAINS": "corp.example, admins.corp.example",
        "OIDC_ADMIN_GROUP": "wb-admins",
    }.items():
        monkeypatch.setattr(live.settings, name, value)
    return started


def through_provider(live: LiveServer, login: str) -> tuple[str, list[str]]:
    """Sign in as `login` at the provider; the /sso URL the browser lands on, and the way."""
    with httpx.Client(timeout=60) as browser:
        return sign_in(browser, f"{live.url}/api/v1/auth/oidc/login", login, f"{live.url}/sso")


def fragment(url: str) -> tuple[str, str]:
    key, _, value = url.split("#", 1)[1].partition("=")
    return key, unquote(value)


def test_signing_in_through_the_provider_makes_the_account_and_maps_admins(
    live: LiveServer, anon: Api, provider: OidcTestProvider
) -> None:
    assert anon.get("/auth/config").json() == {
        "password_login": True,
        "oidc": {"name": "Corp SSO"},
    }
    start = anon.get("/auth/oidc/login", follow_redirects=False)
    assert start.status_code == 302
    at_provider = start.headers["location"]
    assert at_provider.startswith(provider.issuer)
    assert "code_challenge_method=S256" in at_provider and "nonce=" in at_provider

    landed, way = through_provider(live, "carol@corp.example")
    kind, code = fragment(landed)
    assert kind == "code" and "?" not in landed  # the code is in the fragment, never a query
    login = anon.post("/auth/oidc/exchange", json={"code": code})
    assert login.status_code == 200, login.text
    assert login.json()["user"]["email"] == "carol@corp.example"
    assert login.json()["user"]["is_admin"] is False
    carol = Api(live, login.json()["access_token"])
    assert carol.get("/projects").status_code == 200
    assert_error(anon.post("/auth/oidc/exchange", json={"code": code}), 404, "code_not_found")

    # The provider's callback, replayed (the state was used): refused, with a sentence.
    callback = next(u for u in way if "/auth/oidc/callback" in u)
    with httpx.Client(timeout=60) as attacker:
        replayed = attacker.get(callback, follow_redirects=False)
    assert replayed.status_code == 302
    assert fragment(replayed.headers["location"]) == (
        "error",
        "This sign-in was already used or has expired; start it again.",
    )

    landed, _ = through_provider(live, "admin-dee@corp.example")
    dee = anon.post("/auth/oidc/exchange", json={"code": fragment(landed)[1]}).json()
    assert dee["user"]["is_admin"] is True
    assert Api(live, dee["access_token"]).get("/users").status_code == 200
    # Signing in again makes no second account.
    through_provider(live, "carol@corp.example")
    admin = anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
    emails = [u["email"] for u in admin.get("/users").json()["items"]]
    assert emails.count("carol@corp.example") == 1


def test_domains_not_allowed_and_unverified_emails_are_refused(
    live: LiveServer, anon: Api, provider: OidcTestProvider
) -> None:
    landed, _ = through_provider(live, "eve@elsewhere.example")
    assert fragment(landed) == (
        "error",
        "Accounts of elsewhere.example cannot sign in here; this workbench takes people of "
        "admins.corp.example, corp.example.",
    )
    landed, _ = through_provider(live, "unverified-fred@corp.example")
    assert (
        fragment(landed)[1]
        == "Your email address is not verified at the provider; verify it first."
    )
    admin = anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
    assert [u["email"] for u in admin.get("/users").json()["items"]] == [ADMIN_EMAIL]


def test_forged_expired_and_misdirected_id_tokens_are_refused(
    live: LiveServer, provider: OidcTestProvider
) -> None:
    """The workbench's check of ID tokens, against the keys it reads from the running
    provider (its jwks_uri): only the provider's own, fresh token for this client and this
    sign-in passes."""
    keys = live.call(OidcProvider.of(live.settings).keys())
    nonce = "the-nonce-of-this-sign-in"

    def refusal(token: str) -> str:
        with pytest.raises(OidcRefused) as refused:
            verify_id_token(token, keys, provider.issuer, CLIENT_ID, nonce)
        return str(refused.value)

    good = provider.sign(provider.claims(nonce))
    assert verify_id_token(good, keys, provider.issuer, CLIENT_ID, nonce)["email"]
    forged = provider.sign(provider.claims(nonce), key=new_key())
    assert refusal(forged) == (
        "The sign-in was refused: the ID token is not signed by the provider's keys."
    )
    past = int(time.time()) - 3600
    expired = provider.sign(provider.claims(nonce, iat=past - 300, exp=past))
    assert refusal(expired) == "The sign-in was refused: the ID token has expired."
    other_client = provider.sign(provider.claims(nonce, aud="another-app"))
    assert refusal(other_client) == (
        "The sign-in was refused: the ID token is not valid here, it was issued for another "
        "application (audience)."
    )
    other_sign_in = provider.sign(provider.claims("another-nonce"))
    assert refusal(other_sign_in) == (
        "The sign-in was refused: the ID token is not valid here, it does not belong to this "
        "sign-in (nonce)."
    )
    other_issuer = provider.sign(provider.claims(nonce, iss="http://evil.example"))
    assert "issued by another provider" in refusal(other_issuer)
    assert refusal("not.a.token") == "The sign-in was refused: the ID token cannot be read."


def test_the_callback_refuses_bad_id_tokens_over_http(
    live: LiveServer, anon: Api, provider: OidcTestProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real HTTP proxy stands between the workbench and the provider's token endpoint and
    hands over an ID token the test signed: GET /auth/oidc/callback refuses the forged, the
    expired and the misdirected one, sending the browser to /sso#error=<why>; the same proxy
    with a good token signs in, so the refusals are the tokens' doing."""
    make: dict[str, Any] = {}

    def swap(theirs: dict[str, Any]) -> str:
        claims = provider.claims(theirs["nonce"], iss=proxy.url, sub=theirs["sub"])
        claims |= {"email": theirs["email"], "email_verified": True} | make["more"]
        return provider.sign(claims, key=make["key"])

    proxy = IdTokenSwapProxy(provider.issuer, swap).start()
    try:
        # The workbench knows the provider by the proxy's address (its discovery document).
        monkeypatch.setattr(live.settings, "OIDC_ISSUER", proxy.url)
        past = int(time.time()) - 3600
        for key, more, why in [
            (new_key(), {}, "the ID token is not signed by the provider's keys."),
            (provider.key, {"iat": past - 300, "exp": past}, "the ID token has expired."),
            (
                provider.key,
                {"aud": "another-app"},
                "the ID token is not valid here, it was issued for another application (audience).",
            ),
        ]:
            make.update(key=key, more=more)
            landed, _ = through_provider(live, "hal@corp.example")
            assert fragment(landed) == ("error", f"The sign-in was refused: {why}"), landed
        assert proxy.swapped == 3
        admin = anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        assert "hal@corp.example" not in [u["email"] for u in admin.get("/users").json()["items"]]

        make.update(key=provider.key, more={})
        landed, _ = through_provider(live, "hal@corp.example")
        kind, code = fragment(landed)
        assert kind == "code", landed
        login = anon.post("/auth/oidc/exchange", json={"code": code})
        assert login.status_code == 200, login.text
        assert login.json()["user"]["email"] == "hal@corp.example"
        assert proxy.swapped == 4
    finally:
        proxy.stop()


def test_password_login_can_be_switched_off(
    live: LiveServer, anon: Api, provider: OidcTestProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live.settings, "PASSWORD_LOGIN", False)
    assert anon.get("/auth/config").json()["password_login"] is False
    refused = anon.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert_error(refused, 403, "password_login_disabled")
    assert refused.json()["detail"] == (
        "Signing in with a password is switched off here; sign in with Corp SSO."
    )
    landed, _ = through_provider(live, "gil@corp.example")
    assert anon.post("/auth/oidc/exchange", json={"code": fragment(landed)[1]}).status_code == 200


def test_without_a_provider_there_is_no_single_sign_on(anon: Api) -> None:
    assert anon.get("/auth/config").json() == {"password_login": True, "oidc": None}
    assert_error(anon.get("/auth/oidc/login"), 404, "oidc_not_configured")

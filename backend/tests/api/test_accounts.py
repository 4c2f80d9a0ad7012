"""Accounts that recover: a user changes their password, an administrator lists, disables,
enables and resets users, and the server says plainly when ADMIN_PASSWORD no longer applies."""

from __future__ import annotations

import logging

import pytest

from app.auth import service as auth_service
from tests.api.test_auth import assert_error
from tests.conftest import ADMIN_EMAIL, Api
from tests.support.server import LiveServer


def login(anon: Api, email: str, password: str) -> str:
    response = anon.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def test_changing_your_password_ends_your_other_logins(alice: Api, anon: Api) -> None:
    other_login = login(anon, "alice@example.com", "user-password-1")
    token = alice.post("/auth/tokens", json={"name": "script"}).json()["token"]
    wrong = alice.post(
        "/auth/password",
        json={"current_password": "not-my-password", "new_password": "brand-new-pass"},
    )
    assert_error(wrong, 400, "wrong_password")
    assert_error(
        alice.post(
            "/auth/password", json={"current_password": "user-password-1", "new_password": "short"}
        ),
        422,
        "validation_error",
    )
    changed = alice.post(
        "/auth/password",
        json={"current_password": "user-password-1", "new_password": "brand-new-pass"},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["user"]["password_changed_at"] is not None
    # The answer's token is the way on; every earlier login is over, API tokens revoked.
    fresh = changed.json()["access_token"]
    assert anon.get("/auth/me", headers={"Authorization": f"Bearer {fresh}"}).status_code == 200
    for old in (other_login, alice.headers["Authorization"].removeprefix("Bearer ")):
        stale = anon.get("/auth/me", headers={"Authorization": f"Bearer {old}"})
        assert_error(stale, 401, "token_expired")
        assert "password was changed" in stale.json()["detail"]
    assert_error(
        anon.get("/auth/me", headers={"Authorization": f"Bearer {token}"}), 401, "invalid_token"
    )
    assert_error(
        anon.post(
            "/auth/login", json={"email": "alice@example.com", "password": "user-password-1"}
        ),
        401,
        "invalid_credentials",
    )
    login(anon, "alice@example.com", "brand-new-pass")


def test_an_administrator_lists_disables_enables_and_resets_users(
    admin: Api, alice: Api, anon: Api
) -> None:
    listed = admin.get("/users").json()
    assert [u["email"] for u in listed["items"]] == [ADMIN_EMAIL, "alice@example.com"]
    assert listed["total"] == 2 and not any(u["disabled"] for u in listed["items"])
    assert_error(alice.get("/users"), 403, "admin_only")
    alice_id = listed["items"][1]["id"]
    token = alice.post("/auth/tokens", json={"name": "script"}).json()["token"]

    disabled = admin.patch(f"/users/{alice_id}", json={"disabled": True})
    assert disabled.status_code == 200 and disabled.json()["disabled"] is True
    # Every way in is closed, with a sentence that says why; nothing of hers is gone.
    for bearer in (alice.headers["Authorization"], f"Bearer {token}"):
        refused = anon.get("/projects", headers={"Authorization": bearer})
        assert_error(refused, 401, "account_disabled")
        assert "ask an administrator" in refused.json()["detail"]
    refused = anon.post(
        "/auth/login", json={"email": "alice@example.com", "password": "user-password-1"}
    )
    assert_error(refused, 401, "account_disabled")
    wrong = anon.post("/auth/login", json={"email": "alice@example.com", "password": "guess-1234"})
    assert_error(wrong, 401, "invalid_credentials")  # a wrong password learns nothing more

    reset = admin.patch(f"/users/{alice_id}", json={"disabled": False, "password": "from-admin-1"})
    assert reset.status_code == 200 and reset.json()["disabled"] is False
    assert_error(alice.get("/projects"), 401, "token_expired")
    new_login = login(anon, "alice@example.com", "from-admin-1")
    assert anon.get("/auth/me", headers={"Authorization": f"Bearer {new_login}"}).status_code == 200

    made_admin = admin.patch(f"/users/{alice_id}", json={"is_admin": True})
    assert made_admin.json()["is_admin"] is True
    assert_error(
        admin.patch("/users/00000000-0000-0000-0000-000000000000", json={}), 404, "user_not_found"
    )


def test_an_administrator_cannot_lock_themselves_out(admin: Api) -> None:
    me = admin.get("/auth/me").json()
    for change in ({"disabled": True}, {"is_admin": False}):
        refused = admin.patch(f"/users/{me['id']}", json=change)
        assert_error(refused, 409, "cannot_change_self")
    assert admin.get("/auth/me").json()["is_admin"] is True


def test_a_changed_admin_password_setting_is_explained_at_start(
    live: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    async def start_with(email: str, password: str) -> None:
        async with live.state.session_factory() as db:
            await auth_service.ensure_admin(db, email, password)

    with caplog.at_level(logging.WARNING, logger="app.auth.service"):
        live.call(start_with(ADMIN_EMAIL, "a-new-password-in-env"))
        live.call(start_with("someone@example.com", "whatever-123"))
    said = caplog.text
    assert f"ADMIN_PASSWORD is not the password of {ADMIN_EMAIL}" in said
    assert f"workbench admin reset-password {ADMIN_EMAIL}" in said
    assert "ADMIN_EMAIL someone@example.com is not a user here" in said
    assert "a-new-password-in-env" not in said

from __future__ import annotations

import uuid
from datetime import timedelta

from app.auth.security import create_access_token
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, TEST_SECRET, Api


def assert_error(response, status: int, code: str) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code
    assert isinstance(body["detail"], str) and body["detail"]


def test_login_returns_a_token_that_identifies_the_user(anon: Api) -> None:
    response = anon.post(
        "/auth/login", json={"email": ADMIN_EMAIL.upper(), "password": ADMIN_PASSWORD}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["token_type"] == "bearer"
    assert body["user"]["email"] == ADMIN_EMAIL and body["user"]["is_admin"] is True
    me = anon.get("/auth/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200
    assert me.json() == body["user"]


def test_wrong_password_and_unknown_email_are_indistinguishable(anon: Api) -> None:
    wrong = anon.post("/auth/login", json={"email": ADMIN_EMAIL, "password": "nope-nope"})
    unknown = anon.post("/auth/login", json={"email": "ghost@example.com", "password": "nope-nope"})
    assert_error(wrong, 401, "invalid_credentials")
    assert wrong.json() == unknown.json()


def test_requests_without_a_valid_token_are_refused(anon: Api, live) -> None:  # type: ignore[no-untyped-def]
    assert_error(anon.get("/projects"), 401, "not_authenticated")
    assert anon.get("/projects").headers["www-authenticate"] == "Bearer"
    assert_error(
        anon.get("/projects", headers={"Authorization": "Bearer nonsense"}), 401, "invalid_token"
    )
    assert_error(
        anon.get("/projects", headers={"Authorization": "Bearer wb_notatoken"}),
        401,
        "invalid_token",
    )
    forged, _ = create_access_token(uuid.uuid4(), "another-key-" + "y" * 40, timedelta(minutes=5))
    assert_error(
        anon.get("/projects", headers={"Authorization": f"Bearer {forged}"}), 401, "invalid_token"
    )


def test_an_expired_login_token_asks_to_log_in_again(admin: Api) -> None:
    user_id = uuid.UUID(admin.get("/auth/me").json()["id"])
    expired, _ = create_access_token(user_id, TEST_SECRET, timedelta(seconds=-5))
    response = admin.get("/auth/me", headers={"Authorization": f"Bearer {expired}"})
    assert_error(response, 401, "token_expired")
    assert "log in again" in response.json()["detail"]


def test_api_tokens_work_until_revoked(alice: Api, anon: Api) -> None:
    created = alice.post("/auth/tokens", json={"name": "laptop script"})
    assert created.status_code == 201
    token = created.json()["token"]
    assert token.startswith("wb_")

    listed = alice.get("/auth/tokens").json()
    assert listed["total"] == 1
    assert listed["items"][0]["name"] == "laptop script"
    assert token not in str(listed)  # shown once, never again

    with Api(anon.live, token) as scripted:
        assert scripted.get("/auth/me").json()["email"] == "alice@example.com"
        assert alice.get("/auth/tokens").json()["items"][0]["last_used_at"] is not None
        assert alice.delete(f"/auth/tokens/{created.json()['id']}").status_code == 204
        assert_error(scripted.get("/auth/me"), 401, "invalid_token")
    assert alice.get("/auth/tokens").json() == {"items": [], "total": 0}


def test_a_user_cannot_revoke_someone_elses_token(alice: Api, bob: Api) -> None:
    token_id = alice.post("/auth/tokens", json={"name": "mine"}).json()["id"]
    assert_error(bob.delete(f"/auth/tokens/{token_id}"), 404, "not_found")
    assert alice.get("/auth/tokens").json()["total"] == 1


def test_only_admins_create_users(admin: Api, alice: Api) -> None:
    assert_error(
        alice.post("/users", json={"email": "eve@example.com", "password": "password-123"}),
        403,
        "admin_only",
    )
    made = admin.post("/users", json={"email": " Eve@Example.com ", "password": "password-123"})
    assert made.status_code == 201
    assert made.json()["email"] == "eve@example.com" and made.json()["is_admin"] is False
    assert_error(
        admin.post("/users", json={"email": "eve@example.com", "password": "password-456"}),
        409,
        "email_taken",
    )
    assert_error(
        admin.post("/users", json={"email": "not-an-email", "password": "password-123"}),
        422,
        "validation_error",
    )
    assert_error(
        admin.post("/users", json={"email": "x@example.com", "password": "short"}),
        422,
        "validation_error",
    )
    assert admin.as_user("eve@example.com", "password-123").get("/auth/me").status_code == 200

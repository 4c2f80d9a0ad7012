"""Attacks on sign-in (issue 42, points 10 and 11), through the real API on both stacks:
an owner inviting into another's project, lesser roles inviting, a used invite replayed or
accepted twice at once, guessing at invite tokens, a user who must change their password
calling everything else, and single sign-on's state and login codes replayed or made up."""

from __future__ import annotations

import threading
from typing import Any

import httpx
from sqlalchemy import select

from app.models import Invite
from tests.api.test_auth import assert_error
from tests.api.test_invites import accept, invite, listed
from tests.api.test_login_rate_limit import client_from, new_address
from tests.conftest import Api
from tests.support.server import LiveServer


def test_an_owner_cannot_invite_into_another_owners_project(
    admin: Api, alice: Api, bob: Api
) -> None:
    hers = alice.project("Hers")
    bob.project("His")
    attempt = {"email": "mallory@example.com", "project_id": hers["id"], "role": "owner"}
    assert_error(bob.post("/invites", json=attempt), 404, "project_not_found")
    for role in ("viewer", "editor"):
        member = alice.post(
            f"/projects/{hers['id']}/members", json={"email": "bob@example.com", "role": role}
        )
        assert member.status_code in (200, 201), member.text
        assert_error(bob.post("/invites", json=attempt), 403, "forbidden_role")
        if role == "viewer":
            alice.delete(f"/projects/{hers['id']}/members/{bob.get('/auth/me').json()['id']}")
    assert listed(admin) == {}  # nothing was made
    made = invite(alice, "nina@example.com", project_id=hers["id"])
    assert_error(bob.delete(f"/invites/{made['id']}"), 404, "invite_not_found")
    assert listed(alice)[made["id"]]["status"] == "pending"


def test_a_used_invite_is_refused_and_two_accepts_at_once_make_one_account(
    live: LiveServer, admin: Api, anon: Api
) -> None:
    made = invite(admin, "olga@example.com")
    answers: list[int] = []

    def take(password: str) -> None:
        with Api(live) as client:
            answers.append(accept(client, made["token"], password).status_code)

    racers = [threading.Thread(target=take, args=(f"password-{n}-olga",)) for n in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(answers).count(200) == 1, answers
    assert set(answers) - {200} <= {404, 409}
    assert_error(accept(anon, made["token"], "late-password-1"), 404, "invite_not_found")
    emails = [u["email"] for u in admin.get("/users").json()["items"]]
    assert emails.count("olga@example.com") == 1

    async def stored() -> list[str]:
        async with live.state.session_factory() as db:
            return list(await db.scalars(select(Invite.token_hash)))

    # Only a hash of the token is kept.
    assert made["token"] not in str(live.call(stored()))


def test_guessing_at_invite_tokens_is_refused_per_address(live: LiveServer, admin: Api) -> None:
    made = invite(admin, "pete@example.com")
    allowance = live.settings.LOGIN_MAX_FAILURES * 5
    body = {"password": "a-good-password"}
    with client_from(live, new_address()) as guesser:
        for n in range(allowance):
            assert guesser.post(f"/invites/{n:043d}/accept", json=body).status_code == 404
        refused = guesser.post(f"/invites/{made['token']}/accept", json=body)
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    with client_from(live, new_address()) as invited:
        assert invited.post(f"/invites/{made['token']}/accept", json=body).status_code == 200


def test_a_user_who_must_change_their_password_can_do_nothing_else(
    admin: Api, alice: Api, anon: Api
) -> None:
    project = alice.project("Shared")
    made = admin.post("/users", json={"email": "quinn@example.com"}).json()
    alice.post(
        f"/projects/{project['id']}/members", json={"email": "quinn@example.com", "role": "owner"}
    )
    quinn = anon.as_user("quinn@example.com", made["generated_password"])
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("GET", "/projects", None),
        ("GET", f"/projects/{project['id']}", None),
        ("POST", "/projects", {"name": "Mine"}),
        ("DELETE", f"/projects/{project['id']}", None),
        ("POST", f"/projects/{project['id']}/sessions", {"title": "x"}),
        ("GET", "/auth/tokens", None),
        ("POST", "/auth/tokens", {"name": "escape"}),
        ("GET", "/invites", None),
        ("POST", "/invites", {"email": "r@example.com", "project_id": project["id"]}),
        ("GET", "/models", None),
    ]
    for method, path, body in calls:
        assert_error(quinn.request(method, path, json=body), 403, "password_change_required")
    assert alice.get(f"/projects/{project['id']}").status_code == 200  # still there
    assert quinn.get("/auth/me").status_code == 200


def test_single_sign_on_states_and_codes_cannot_be_made_up(anon: Api, live: LiveServer) -> None:
    """Without a provider the callback is closed; and no code the server did not make
    trades for a login."""
    assert_error(
        anon.get("/auth/oidc/callback", params={"code": "x", "state": "y"}),
        404,
        "oidc_not_configured",
    )
    for code in ("", "0" * 43, "a" * 128):
        response = anon.post("/auth/oidc/exchange", json={"code": code})
        assert_error(response, 404, "code_not_found")
    assert (
        httpx.post(f"{live.url}/api/v1/auth/oidc/exchange", json={"code": "b" * 129}).status_code
        == 422
    )

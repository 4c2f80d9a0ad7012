"""Invites (issue 42, point 10), on both stacks: an administrator or a project's owner
invites by email; the one-time link lets the person set their own password and lands them
in the project; used, revoked and expired links accept nothing; with SMTP configured the
link is emailed (to a real SMTP server started here) and the invite says how that went."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import update

from app.models import Invite
from app.models.base import utcnow
from tests.api.test_auth import assert_error
from tests.conftest import Api
from tests.support.server import LiveServer
from tests.support.services import free_port


def invite(api: Api, email: str, **more: Any) -> dict[str, Any]:
    response = api.post("/invites", json={"email": email, **more})
    assert response.status_code == 201, response.text
    return dict(response.json())


def accept(anon: Api, token: str, password: str = "my-own-pass-1") -> Any:
    return anon.post(f"/invites/{token}/accept", json={"password": password})


def listed(api: Api, **params: Any) -> dict[str, dict[str, Any]]:
    response = api.get("/invites", params=params)
    assert response.status_code == 200, response.text
    return {i["id"]: i for i in response.json()["items"]}


def test_an_invite_lets_the_person_set_a_password_and_join_the_project(
    admin: Api, alice: Api, anon: Api
) -> None:
    project = alice.project("Finance")
    made = invite(admin, "Carol@Example.com", project_id=project["id"], role="viewer")
    token = made["token"]
    # 256 random bits, in the fragment of the SPA's page (no server ever logs a fragment).
    assert len(token) >= 43 and made["url"].endswith(f"/invite#{token}")
    assert made["email"] == "carol@example.com" and made["email_status"] == "not_sent"
    shown = listed(admin)[made["id"]]
    assert shown["status"] == "pending" and shown["project_name"] == "Finance"
    assert token not in str(admin.get("/invites").json())

    assert_error(accept(anon, token, "short"), 422, "validation_error")
    accepted = accept(anon, token)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["user"]["email"] == "carol@example.com"
    assert accepted.json()["project_id"] == project["id"]
    carol = Api(anon.live, accepted.json()["access_token"])
    projects = carol.get("/projects").json()["items"]
    assert [(p["name"], p["role"]) for p in projects] == [("Finance", "viewer")]
    # Her password is hers: she signs in with it.
    carol_again = anon.as_user("carol@example.com", "my-own-pass-1")
    assert carol_again.get("/auth/me").json()["must_change_password"] is False

    again = accept(anon, token, "another-pass-2")
    assert_error(again, 404, "invite_not_found")
    assert "used already" in again.json()["detail"]
    assert listed(admin)[made["id"]]["status"] == "accepted"
    log = alice.get(f"/projects/{project['id']}/audit").json()["items"]
    said = {e["action"]: e["summary"] for e in log}
    assert "invited carol@example.com as viewer" in said["invite.created"]
    assert said["invite.accepted"].startswith("carol@example.com accepted their invite")


def test_owners_invite_to_their_own_projects_and_no_one_else_does(
    admin: Api, alice: Api, bob: Api, anon: Api
) -> None:
    project = alice.project("Ops")
    mine = invite(alice, "dan@example.com", project_id=project["id"])
    assert mine["role"] == "editor"  # the default role
    assert_error(
        bob.post("/invites", json={"email": "x@example.com", "project_id": project["id"]}),
        404,
        "project_not_found",
    )
    member = alice.post(
        f"/projects/{project['id']}/members", json={"email": "bob@example.com", "role": "editor"}
    )
    assert member.status_code == 201
    refused = bob.post("/invites", json={"email": "x@example.com", "project_id": project["id"]})
    assert_error(refused, 403, "forbidden_role")
    assert_error(alice.post("/invites", json={"email": "x@example.com"}), 403, "admin_only")
    assert_error(
        admin.post("/invites", json={"email": "x@example.com", "project_id": str(uuid.uuid4())}),
        404,
        "project_not_found",
    )
    assert_error(
        admin.post("/invites", json={"email": "x@example.com", "role": "owner"}),
        422,
        "role_without_project",
    )
    assert_error(
        admin.post("/invites", json={"email": "x@example.com", "expires_in_days": 31}),
        422,
        "too_long",
    )
    taken = admin.post("/invites", json={"email": "bob@example.com"})
    assert_error(taken, 409, "email_taken")
    assert_error(admin.post("/invites", json={"email": "not-an-email"}), 422, "validation_error")

    # Each sees the invites they manage; another's id is unknown to them.
    assert list(listed(bob)) == []
    assert list(listed(alice)) == [mine["id"]]
    assert mine["id"] in listed(admin, project_id=project["id"])
    assert_error(bob.delete(f"/invites/{mine['id']}"), 404, "invite_not_found")
    assert alice.delete(f"/invites/{mine['id']}").status_code == 204
    assert alice.delete(f"/invites/{mine['id']}").status_code == 204  # again: no error
    assert listed(alice)[mine["id"]]["status"] == "revoked"
    assert_error(accept(anon, mine["token"]), 404, "invite_not_found")
    actions = [e["action"] for e in alice.get(f"/projects/{project['id']}/audit").json()["items"]]
    assert {"invite.created", "invite.revoked"} <= set(actions)


def test_expired_invites_accept_nothing_and_an_existing_account_is_told_to_sign_in(
    live: LiveServer, admin: Api, anon: Api
) -> None:
    old = invite(admin, "erin@example.com", expires_in_days=1)
    assert admin.get("/invites").json()["items"][0]["expires_at"] > utcnow().isoformat()

    async def expire() -> None:
        async with live.state.session_factory() as db:
            gone = utcnow() - timedelta(seconds=1)
            await db.execute(
                update(Invite).where(Invite.id == uuid.UUID(old["id"])).values(expires_at=gone)
            )
            await db.commit()

    live.call(expire())
    assert_error(accept(anon, old["token"]), 404, "invite_not_found")
    assert listed(admin)[old["id"]]["status"] == "expired"

    fresh = invite(admin, "erin@example.com")
    assert admin.post("/users", json={"email": "erin@example.com"}).status_code == 201
    taken = accept(anon, fresh["token"])
    assert_error(taken, 409, "email_taken")
    assert "sign in" in taken.json()["detail"]
    assert listed(admin)[fresh["id"]]["status"] == "pending"


class Inbox:
    """What a real SMTP server (aiosmtpd) started by the test received."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], str]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((list(envelope.rcpt_tos), envelope.content.decode()))
        return "250 OK"


@pytest.fixture
def smtp(live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    monkeypatch.setattr(live.settings, "SMTP_HOST", "127.0.0.1")
    monkeypatch.setattr(live.settings, "SMTP_PORT", controller.port)
    monkeypatch.setattr(live.settings, "SMTP_STARTTLS", False)
    monkeypatch.setattr(live.settings, "SMTP_FROM", "Workbench <wb@example.com>")
    yield inbox
    controller.stop()


def settled(admin: Api, invite_id: str) -> dict[str, Any]:
    """The invite once its email was sent or failed (the sending follows the answer)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = listed(admin)[invite_id]
        if found["email_status"] != "sending":
            return found
        time.sleep(0.05)
    raise AssertionError("the invite's email never settled")


def test_with_smtp_set_the_invite_is_emailed_and_a_failure_is_shown(
    live: LiveServer, admin: Api, smtp: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = invite(admin, "fay@example.com")
    assert made["email_status"] == "sending"
    assert settled(admin, made["id"])["email_status"] == "sent"
    [(to, text)] = smtp.messages
    assert to == ["fay@example.com"]
    assert made["url"] in text and "admin" in text and "From: Workbench <wb@example.com>" in text

    monkeypatch.setattr(live.settings, "SMTP_PORT", 1)  # nothing listens there
    failed = invite(admin, "gus@example.com")
    shown = settled(admin, failed["id"])
    assert shown["email_status"] == "failed"
    assert "Could not reach the SMTP server 127.0.0.1:1" in shown["email_error"]
    # The link works whatever the email did.
    with Api(live) as anon:
        assert accept(anon, failed["token"]).status_code == 200


def test_a_generated_password_must_be_changed_before_anything_else(admin: Api, anon: Api) -> None:
    made = admin.post("/users", json={"email": "hal@example.com"})
    assert made.status_code == 201, made.text
    password = made.json()["generated_password"]
    assert len(password) >= 16 and made.json()["must_change_password"] is True
    login = anon.post("/auth/login", json={"email": "hal@example.com", "password": password})
    assert login.json()["user"]["must_change_password"] is True
    hal = Api(anon.live, login.json()["access_token"])
    for refused in (hal.get("/projects"), hal.post("/auth/tokens", json={"name": "x"})):
        assert_error(refused, 403, "password_change_required")
    assert hal.get("/auth/me").json()["must_change_password"] is True
    changed = hal.post(
        "/auth/password", json={"current_password": password, "new_password": "hals-own-pass"}
    )
    assert changed.status_code == 200 and changed.json()["user"]["must_change_password"] is False
    hal = Api(anon.live, changed.json()["access_token"])
    assert hal.get("/projects").status_code == 200

    # A reset with a generated password asks for a change again; typed ones stay as before.
    hal_id = made.json()["id"]
    assert_error(
        admin.patch(f"/users/{hal_id}", json={"generate_password": True, "password": "x" * 9}),
        400,
        "two_passwords",
    )
    reset = admin.patch(f"/users/{hal_id}", json={"generate_password": True})
    assert reset.json()["must_change_password"] is True
    again = anon.as_user("hal@example.com", reset.json()["generated_password"])
    assert_error(again.get("/projects"), 403, "password_change_required")
    typed = admin.patch(f"/users/{hal_id}", json={"password": "typed-by-admin"})
    assert typed.json()["generated_password"] is None
    assert anon.as_user("hal@example.com", "typed-by-admin").get("/projects").status_code == 200

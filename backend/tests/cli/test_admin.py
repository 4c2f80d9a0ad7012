"""`workbench admin reset-password`: a lost admin password is reset on the server's own
machine, straight to its database (embedded or Postgres), with its settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.api.test_auth import assert_error
from tests.conftest import ADMIN_EMAIL, Api
from tests.support.server import LiveServer

WORKBENCH = Path(sys.executable).parent / "workbench"


def admin_command(
    live: LiveServer, *args: str, stdin: str = "", extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DATA_DIR"))}
    env["DATA_DIR"] = str(live.settings.DATA_DIR)
    env.update(extra_env or {})
    if live.settings.DATABASE_URL:
        env["DATABASE_URL"] = live.settings.DATABASE_URL
    return subprocess.run(
        [str(WORKBENCH), "admin", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=live.settings.DATA_DIR,
    )


def test_a_lost_admin_password_is_reset_on_the_server(
    admin: Api, anon: Api, live: LiveServer
) -> None:
    old_login = admin.headers["Authorization"]
    me = admin.get("/auth/me").json()
    # Meanwhile someone disabled the account too (another admin could).
    second = admin.new_user("second@example.com")
    promoted = admin.patch("/users/" + second.get("/auth/me").json()["id"], json={"is_admin": True})
    assert promoted.status_code == 200
    assert second.patch(f"/users/{me['id']}", json={"disabled": True}).status_code == 200

    done = admin_command(
        live,
        "reset-password",
        ADMIN_EMAIL,
        "--password-stdin",
        "--enable",
        stdin="recovered-pass-1\n",
    )
    assert done.returncode == 0, done.stderr
    assert f"The password of {ADMIN_EMAIL} is reset" in done.stdout
    assert "enabled again" in done.stdout

    login = anon.post("/auth/login", json={"email": ADMIN_EMAIL, "password": "recovered-pass-1"})
    assert login.status_code == 200, login.text
    assert_error(anon.get("/auth/me", headers={"Authorization": old_login}), 401, "token_expired")

    unknown = admin_command(
        live, "reset-password", "nobody@example.com", "--password-stdin", stdin="whatever-123\n"
    )
    assert unknown.returncode == 1
    assert "No account nobody@example.com here" in unknown.stdout
    assert ADMIN_EMAIL in unknown.stdout  # the accounts there, to pick from

    short = admin_command(live, "reset-password", ADMIN_EMAIL, "--password-stdin", stdin="short\n")
    assert short.returncode == 2 and "at least 8 characters" in short.stderr


def test_reset_password_says_where_it_looked_when_there_is_no_database(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DATA_DIR"))}
    env["DATA_DIR"] = str(tmp_path / "nothing-here")
    done = subprocess.run(
        [str(WORKBENCH), "admin", "reset-password", ADMIN_EMAIL, "--password-stdin"],
        input="recovered-pass-1\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert f"No workbench database at {tmp_path / 'nothing-here' / 'workbench.db'}" in done.stderr


def test_a_users_api_tokens_are_revoked_on_the_server(
    admin: Api, alice: Api, anon: Api, live: LiveServer
) -> None:
    tokens = [alice.post("/auth/tokens", json={"name": n}).json()["token"] for n in ("a", "b")]
    done = admin_command(live, "revoke-tokens", "Alice@Example.com")
    assert done.returncode == 0, done.stderr
    assert "Revoked 2 API tokens of alice@example.com" in done.stdout
    for token in tokens:
        refused = anon.get("/projects", headers={"Authorization": f"Bearer {token}"})
        assert_error(refused, 401, "invalid_token")
    assert alice.get("/projects").status_code == 200  # the account and its login stay
    unknown = admin_command(live, "revoke-tokens", "nobody@example.com")
    assert unknown.returncode == 1 and "No account nobody@example.com here" in unknown.stdout


def test_an_admin_sets_a_users_storage_quota_on_the_server(admin: Api, live: LiveServer) -> None:
    alice = admin.new_user("quota-alice@example.com")
    project = alice.project("Quota")
    assert alice.upload(project["id"], "a.zip", b"x" * 2048).status_code == 201

    shown = admin_command(live, "storage-quota", "quota-alice@example.com")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == (
        "quota-alice@example.com: storage quota 50.0 GB (the server's); 2.0 KB used by 1 file "
        "version(s), artifacts and snapshots."
    )
    tiny = admin_command(live, "storage-quota", "quota-alice@example.com", "1")
    assert tiny.returncode == 0, tiny.stderr
    assert "storage quota 1.0 MB (their own)" in tiny.stdout
    assert alice.get("/auth/me").json()["storage_quota_mb"] == 1
    refused = alice.upload(project["id"], "b.zip", b"y" * (2 << 20))
    assert refused.status_code == 413 and refused.json()["code"] == "storage_quota_exceeded"

    back = admin_command(live, "storage-quota", "quota-alice@example.com", "--default")
    assert back.returncode == 0 and "(the server's)" in back.stdout
    assert alice.upload(project["id"], "b.zip", b"y" * (2 << 20)).status_code == 201

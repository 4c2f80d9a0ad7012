"""Rotating the key that seals source passwords: after SECRET_KEY changes (the old one kept
in SOURCES_PREVIOUS_SECRET_KEYS), `workbench admin reencrypt-sources` seals every password
with the new key; a password no key opens is named, not lost silently."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from app.models import DataSource
from app.sources.credentials import CannotDecrypt, Keyring, Secret
from tests.cli.test_admin import admin_command
from tests.conftest import TEST_SECRET, Api
from tests.support.server import LiveServer

NEW_SECRET = "rotated-signing-key-" + "y" * 40


def test_reencrypt_sources_moves_every_password_to_the_current_key(
    alice: Api, live: LiveServer
) -> None:
    project = alice.project()
    for name in ("a", "b"):  # unreachable, which does not matter here
        created = alice.post(
            f"/projects/{project['id']}/sources",
            json={"name": name, "url": f"mysql://u:pw-{name}@127.0.0.1:1/x"},
        )
        assert created.status_code == 201, created.text

    async def sealed() -> dict[str, tuple[uuid.UUID, str]]:
        async with live.state.session_factory() as db:
            rows = (await db.scalars(select(DataSource))).all()
            return {s.name: (s.id, s.password_sealed or "") for s in rows}

    before = live.call(sealed())
    old = Keyring(TEST_SECRET)
    assert all(old.is_current(value) for _, value in before.values())

    done = admin_command(
        live,
        "reencrypt-sources",
        extra_env={"SECRET_KEY": NEW_SECRET, "SOURCES_PREVIOUS_SECRET_KEYS": TEST_SECRET},
    )
    assert done.returncode == 0, done.stderr
    assert "Encrypted 2 source passwords again" in done.stdout
    new = Keyring(NEW_SECRET)
    for name, (source_id, value) in live.call(sealed()).items():
        assert new.is_current(value) and value != before[name][1]
        assert new.open(value, str(source_id)) == Secret(f"pw-{name}")
        with pytest.raises(CannotDecrypt):
            old.open(value, str(source_id))

    # The old key forgotten before its passwords moved: they are named, and kept as they are.
    lost = admin_command(live, "reencrypt-sources", extra_env={"SECRET_KEY": "another-" + "z" * 40})
    assert lost.returncode == 1 and "cannot be decrypted" in lost.stderr
    assert f"{project['id']}/a" in lost.stderr

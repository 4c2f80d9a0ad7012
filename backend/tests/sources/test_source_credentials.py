"""Passwords at rest: sealed with AES-GCM under a key derived from SECRET_KEY, bound to their
source, opened by an earlier key after rotation, never shown by repr()."""

from __future__ import annotations

import pytest

from app.sources.connection import SourceConnection
from app.sources.credentials import CannotDecrypt, Keyring, Secret
from app.sources.failures import scrub
from app.sources.urls import parse
from tests.sources.engine import reach


def test_a_sealed_password_opens_only_for_its_source_and_with_a_known_key() -> None:
    keyring = Keyring("first-secret-" + "x" * 30)
    sealed = keyring.seal(Secret("hunter2-password"), "source-1")
    assert "hunter2" not in sealed and sealed.startswith(f"v1:{keyring.current_id}:")
    assert keyring.open(sealed, "source-1") == Secret("hunter2-password")
    with pytest.raises(CannotDecrypt, match="damaged"):
        keyring.open(sealed, "source-2")  # copied onto another source's row
    tampered = sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB")
    with pytest.raises(CannotDecrypt):
        keyring.open(tampered, "source-1")
    rotated = Keyring("second-secret-" + "y" * 30)
    with pytest.raises(CannotDecrypt, match="SOURCES_PREVIOUS_SECRET_KEYS"):
        rotated.open(sealed, "source-1")
    both = Keyring("second-secret-" + "y" * 30, ["first-secret-" + "x" * 30])
    assert both.open(sealed, "source-1") == Secret("hunter2-password")
    assert not both.is_current(sealed)
    assert both.is_current(both.seal(Secret("hunter2-password"), "source-1"))


def test_nothing_holding_a_password_shows_it() -> None:
    url = parse("postgresql://alice:hunter2-password@db.example.com/sales")
    connection = SourceConnection(name="sales", url=url, reach=reach())
    for shown in (repr(url), str(url), repr(connection), repr(url.password), url.display()):
        assert "hunter2" not in shown, shown
    assert url.display() == "postgresql://alice:***@db.example.com:5432/sales"
    assert url.display(masked=False) == "postgresql://alice@db.example.com:5432/sales"


def test_scrub_removes_passwords_from_driver_messages() -> None:
    said = (
        "could not connect to postgresql://alice:hunter2@db:5432/x "
        "(password=hunter2 user=alice) pwd='s3cr3t'"
    )
    cleaned = scrub(said, [Secret("hunter2")])
    assert "hunter2" not in cleaned and "s3cr3t" not in cleaned
    assert "postgresql://alice:***@db:5432/x" in cleaned

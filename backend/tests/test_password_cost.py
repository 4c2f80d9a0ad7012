"""Passwords are hashed at argon2's standard cost everywhere but in a test environment
(ENVIRONMENT=test, which the suite's servers use), where thousands of made-up passwords
are hashed at its lowest; a hash of either cost verifies on a server of the other."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.auth import security
from app.config.server import Environment
from app.main import create_app
from tests.conftest import stack_settings


def argon2_cost(password_hash: str) -> str:
    # $argon2id$v=19$m=65536,t=3,p=4$salt$hash
    return password_hash.split("$")[3]


@pytest.fixture
def environments(tmp_path: Path) -> Iterator[None]:
    yield
    security.use_test_cost(True)  # as the suite's other servers have it


def test_only_a_test_environment_hashes_passwords_at_the_lowest_cost(
    tmp_path: Path, environments: None
) -> None:
    create_app(stack_settings("embedded", tmp_path, ENVIRONMENT=Environment.development))
    standard = asyncio.run(security.hash_password("correct horse"))
    assert argon2_cost(standard) == "m=65536,t=3,p=4"

    create_app(stack_settings("embedded", tmp_path, ENVIRONMENT=Environment.test))
    cheap = asyncio.run(security.hash_password("correct horse"))
    assert argon2_cost(cheap) == "m=8,t=1,p=1"
    assert asyncio.run(security.verify_password("correct horse", standard))
    assert not asyncio.run(security.verify_password("wrong horse", standard))

    create_app(stack_settings("embedded", tmp_path, ENVIRONMENT=Environment.development))
    assert asyncio.run(security.verify_password("correct horse", cheap))
    assert not asyncio.run(security.verify_password("correct horse", None))

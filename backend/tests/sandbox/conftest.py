"""Fixtures shared by the sandbox's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.sandbox import SandboxWorker
from tests.sandbox.test_sandbox_service import service, workspace  # noqa: F401


@pytest.fixture(scope="module", params=["local", "service"])
def worker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxWorker]:
    """A worker of this process, and one of the sandbox service (forked from its zygote);
    one of each per test module."""
    if request.param == "local":
        with SandboxWorker(tmp_path_factory.mktemp("workspace")) as worker:
            yield worker
        return
    running = request.getfixturevalue("service")
    name = request.module.__name__.rsplit(".", 1)[-1]
    with SandboxWorker(workspace(running, name), launcher=running.launcher()) as worker:
        yield worker

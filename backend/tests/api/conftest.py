"""Fixtures of the API tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Api
from tests.support.otlp import OtlpReceiver

SALES = (
    b"region,month,revenue\nNorth,2026-01,1200.5\nSouth,2026-01,980\n"
    b"North,2026-02,1310.25\nSouth,2026-02,1000\n"
)


@pytest.fixture
def session(alice: Api) -> dict[str, Any]:
    """A session of alice's, on a project holding "sales data.csv" (SALES)."""
    project = alice.project()
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    response = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Sales"})
    return dict(response.json())


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/HTTP receiver for a module's traced servers (tests/api/test_traces.py)."""
    received = OtlpReceiver().start()
    yield received
    received.stop()

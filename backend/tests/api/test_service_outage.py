"""Postgres or Redis going away: requests answer 503 with a sentence, /readyz names the culprit,
and everything works again once the service is back. The outage is real: a TCP proxy in
front of the service cuts every connection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    Api,
    reset_state,
    services_overrides,
    stack_settings,
)
from tests.support.proxy import CuttableProxy
from tests.support.server import LiveServer

# A check of a service that is down waits out its 3 s (app.api.health) before /readyz
# answers; on a busy machine longer than httpx's default 5 s.
READY_WITHIN = 60.0


@pytest.fixture
def proxied(
    tmp_path: Path, postgres_url: str, redis_url: str, s3_server
) -> Iterator[tuple[LiveServer, CuttableProxy, CuttableProxy]]:  # type: ignore[no-untyped-def]
    pg, rd = urlsplit(postgres_url), urlsplit(redis_url)
    pg_proxy = CuttableProxy(pg.hostname or "127.0.0.1", pg.port or 5432).start()
    redis_proxy = CuttableProxy(rd.hostname or "127.0.0.1", rd.port or 6379).start()
    overrides = services_overrides(
        postgres_url.replace(pg.netloc, f"{pg.username}@{pg_proxy.address}"),
        redis_url.replace(rd.netloc, redis_proxy.address),
        s3_server,
        "service-outage",
    )
    live = LiveServer(stack_settings("services", tmp_path, **overrides)).start()
    live.call(reset_state(live))
    yield live, pg_proxy, redis_proxy
    pg_proxy.restore()
    redis_proxy.restore()
    live.stop()
    pg_proxy.stop()
    redis_proxy.stop()


def test_database_outage_answers_503_and_recovers(proxied) -> None:  # type: ignore[no-untyped-def]
    live, pg_proxy, _ = proxied
    with Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        project = admin.project()
        pg_proxy.cut()
        response = admin.get(f"/projects/{project['id']}")
        assert response.status_code == 503
        assert response.json()["code"] in ("database_unavailable", "service_unavailable")
        ready = httpx.get(f"{live.url}/readyz", timeout=READY_WITHIN)
        assert ready.status_code == 503
        assert ready.json()["checks"]["database"].startswith("error")
        assert ready.json()["checks"]["storage"] == "ok"

        pg_proxy.restore()
        assert admin.get(f"/projects/{project['id']}").json()["name"] == "Sales"
        assert httpx.get(f"{live.url}/readyz", timeout=READY_WITHIN).status_code == 200


def test_redis_outage_shows_in_readiness(proxied) -> None:  # type: ignore[no-untyped-def]
    live, _, redis_proxy = proxied
    redis_proxy.cut()
    ready = httpx.get(f"{live.url}/readyz", timeout=READY_WITHIN)
    assert ready.status_code == 503
    assert ready.json()["checks"]["locks"].startswith("error")
    assert "locks" in ready.json()["detail"]
    redis_proxy.restore()
    assert httpx.get(f"{live.url}/readyz", timeout=READY_WITHIN).status_code == 200

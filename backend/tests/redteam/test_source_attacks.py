"""Sources attacked through the API, on both stacks: a co-owner who never saw a source's
password points it at a server of his own to receive it; passwords with `@`, `:` or `/`
leak a fragment through `display_url`; a check says what answered at an address (and no
more); and checks and creations are asked for without end.

None runs through the deployed stack: each needs a listener on this machine's loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Api
from tests.support.listeners import (
    Blackhole,
    FakePostgres,
    HttpListener,
    Listener,
    SilentListener,
)
from tests.support.server import LiveServer
from tests.support.services import free_port
from tests.support.source_databases import ServerSource


@pytest.fixture
def sources_anywhere(live: LiveServer) -> Iterator[LiveServer]:
    """Sources may reach any host, the tests' PostgreSQL too (on the services stack it is the
    app's own: only an explicit entry allows it), and connecting gives up after 2 s."""
    settings = live.settings
    before = (settings.SOURCES_ALLOWED_HOSTS, settings.SOURCES_CONNECT_TIMEOUT_SECONDS)
    settings.SOURCES_ALLOWED_HOSTS = ["*", "127.0.0.1:5432"]
    settings.SOURCES_CONNECT_TIMEOUT_SECONDS = 2
    yield live
    settings.SOURCES_ALLOWED_HOSTS, settings.SOURCES_CONNECT_TIMEOUT_SECONDS = before


def _add(api: Api, project_id: str, name: str, url: str, **extra: Any) -> dict[str, Any]:
    response = api.post(f"/projects/{project_id}/sources", json={"name": name, "url": url, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _co_owner(alice: Api, bob: Api, project_id: str) -> None:
    me = bob.get("/auth/me").json()
    added = alice.post(
        f"/projects/{project_id}/members", json={"email": me["email"], "role": "owner"}
    )
    assert added.status_code == 201, added.text


def test_a_co_owner_cannot_send_the_stored_password_to_a_server_of_his_own(
    alice: Api, bob: Api, sources_anywhere: LiveServer, pg_source: ServerSource
) -> None:
    project_id = alice.project()["id"]
    source = _add(alice, project_id, "shop", pg_source.url())
    assert source["status"] == "ready", source
    _co_owner(alice, bob, project_id)
    with FakePostgres() as fake:
        own = f"127.0.0.1:{fake.port}"
        for url in [
            f"postgresql://{pg_source.writer}@{own}/{pg_source.database}",
            f"postgres://{pg_source.writer}@{own}/{pg_source.database}?sslmode=disable",
            f"postgresql://{pg_source.writer}:@{own}/{pg_source.database}",
        ]:
            moved = bob.patch(f"/sources/{source['id']}", json={"url": url})
            bob.post(f"/sources/{source['id']}/check")
            assert fake.passwords == [], "the stored password reached the co-owner's server"
            assert moved.status_code == 400, moved.text
            assert moved.json()["code"] == "password_required"
            assert "password" in moved.json()["detail"]
        # Nothing else about the target may change without it either.
        for url in [
            f"postgresql://{pg_source.reader}@127.0.0.1:5432/{pg_source.database}",
            f"postgresql://{pg_source.writer}@127.0.0.1:5432/postgres",
            f"postgresql://{pg_source.writer}@localhost:5432/{pg_source.database}",
            f"mysql://{pg_source.writer}@127.0.0.1:5432/{pg_source.database}",
            # The same server with weaker TLS: the password would cross in clear text.
            f"postgresql://{pg_source.writer}@127.0.0.1:5432/{pg_source.database}?sslmode=disable",
        ]:
            moved = bob.patch(f"/sources/{source['id']}", json={"url": url})
            assert moved.status_code == 400 and moved.json()["code"] == "password_required", url
        kept = alice.get(f"/sources/{source['id']}").json()
        assert kept["display_url"] == source["display_url"] and kept["status"] == "ready"

        # With a password of his own, the source moves, and only that password goes there.
        moved = bob.patch(
            f"/sources/{source['id']}",
            json={"url": f"postgresql://{pg_source.writer}@{own}/x", "password": "bobs-guess"},
        )
        assert moved.status_code == 200 and moved.json()["status"] == "failed", moved.text
        assert fake.passwords == ["bobs-guess"]

    log = alice.get(f"/projects/{project_id}/audit", params={"action": "source"}).json()
    changed = [e for e in log["items"] if e["action"] == "source.changed"]
    assert len(changed) == 1, log
    assert changed[0]["actor"]["email"] == bob.get("/auth/me").json()["email"]
    assert changed[0]["detail"]["fields"] == ["database", "password", "port"]
    assert pg_source.password not in str(log) and "bobs-guess" not in str(log)


@pytest.mark.parametrize(
    "password", ["p@ss", "a@b@c@", "pa:ss@w/rd", "x/y@z", "::@@//", "a%40b%2Fc", "%2F@%3A"]
)
def test_display_url_shows_no_fragment_of_a_password(
    alice: Api, sources_anywhere: LiveServer, password: str
) -> None:
    project_id = alice.project()["id"]
    closed = free_port()
    source = _add(alice, project_id, "typed", f"postgresql://ana:{password}@127.0.0.1:{closed}/s")
    shown = source["display_url"]
    assert shown == f"postgresql://ana:***@127.0.0.1:{closed}/s", shown
    for piece in {p for p in password.replace("%", "@").split("@") if len(p) > 1}:
        assert piece not in shown.split("@", 1)[1], (piece, shown)
    assert password not in source["status_detail"]


def _check_at(api: Api, project_id: str, kind: str, port: int) -> tuple[int, dict[str, Any]]:
    url = f"{kind}://ana:secret@127.0.0.1:{port}/shop"
    source = _add(api, project_id, f"{kind}-{port}", url)
    check = api.post(f"/sources/{source['id']}/check")
    body = dict(check.json())
    assert source["status_detail"] == body["detail"], (source, body)
    return check.status_code, body


@pytest.mark.parametrize("kind", ["postgresql", "mysql"])
def test_a_check_says_what_answered_and_nothing_more(
    alice: Api, sources_anywhere: LiveServer, kind: str
) -> None:
    """A check tells a closed port from a silent one from one that speaks something else
    (issue 42: the person who typed the URL must learn what is there). What keeps it from
    being a port scanner of the server's network is elsewhere: SOURCES_ALLOWED_HOSTS, the
    workbench's own services and metadata addresses refused before any connection (the
    tests above and tests/sources/test_source_reach.py), and the per-user rate limit
    (below). Each sentence names only the host:port as typed, never the password."""
    project_id = alice.project()["id"]
    product = "PostgreSQL" if kind == "postgresql" else "MySQL or MariaDB"
    listeners: list[Listener] = [SilentListener(), HttpListener()]
    with listeners[0] as silent, listeners[1] as http, Blackhole() as hole:
        closed = free_port()
        answers = {
            closed: _check_at(alice, project_id, kind, closed),
            silent.port: _check_at(alice, project_id, kind, silent.port),
            http.port: _check_at(alice, project_id, kind, http.port),
            hole.port: _check_at(alice, project_id, kind, hole.port),
        }
        assert silent.connections and http.connections
    expected = {
        closed: f"127.0.0.1:{closed} refused the connection.",
        silent.port: f"Something answers at 127.0.0.1:{silent.port}, but not {product}.",
        http.port: f"Something answers at 127.0.0.1:{http.port}, but not {product}.",
        hole.port: f"Nothing answered at 127.0.0.1:{hole.port} within 2 s.",
    }
    for port, (status, body) in answers.items():
        assert status == 200 and body["ok"] is False, body
        assert body["detail"] == expected[port], body
        assert "secret" not in body["detail"]


def test_checks_and_creations_are_limited_per_user_per_minute(
    alice: Api, bob: Api, sources_anywhere: LiveServer
) -> None:
    settings = sources_anywhere.settings
    before = (settings.SOURCES_CHECKS_PER_MINUTE, settings.SOURCES_CREATIONS_PER_MINUTE)
    settings.SOURCES_CHECKS_PER_MINUTE, settings.SOURCES_CREATIONS_PER_MINUTE = 3, 2
    try:
        project_id = alice.project()["id"]
        url = f"postgresql://ana@127.0.0.1:{free_port()}/x"
        first = _add(alice, project_id, "one", url)
        _add(alice, project_id, "two", url)
        third = alice.post(f"/projects/{project_id}/sources", json={"name": "three", "url": url})
        assert third.status_code == 429, third.text
        assert third.json()["code"] == "rate_limited" and "minute" in third.json()["detail"]
        assert 0 < int(third.headers["Retry-After"]) <= 60
        names = [s["name"] for s in alice.get(f"/projects/{project_id}/sources").json()["items"]]
        assert names == ["one", "two"]

        checks = [alice.post(f"/sources/{first['id']}/check") for _ in range(3)]
        assert [c.status_code for c in checks] == [200, 200, 200]
        refused = alice.post(f"/sources/{first['id']}/check")
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        assert 0 < int(refused.headers["Retry-After"]) <= 60
        # Pointing a source elsewhere checks it: counted the same.
        moved = alice.patch(
            f"/sources/{first['id']}", json={"url": f"postgresql://ana@127.0.0.1:{free_port()}/y"}
        )
        assert moved.status_code == 429, moved.text
        # Another user has an allowance of his own.
        other = bob.project()["id"]
        assert (
            bob.post(f"/projects/{other}/sources", json={"name": "b", "url": url}).status_code
            == 201
        )
    finally:
        settings.SOURCES_CHECKS_PER_MINUTE, settings.SOURCES_CREATIONS_PER_MINUTE = before

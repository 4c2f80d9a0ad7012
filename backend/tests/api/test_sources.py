"""Data sources through the API, on both stacks, against this machine's real PostgreSQL and
MariaDB and SQLite/DuckDB files: adding and checking them, what their role may do, their
schema and the team's descriptions, ownership, and the password kept out of every answer,
log line and database row."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.models import DataSource
from app.sources import service
from tests.conftest import Api
from tests.support.listeners import Blackhole
from tests.support.server import LiveServer
from tests.support.services import free_port
from tests.support.source_databases import ORDERS, ServerSource


@pytest.fixture
def reachable(live: LiveServer, source_files: tuple[Path, Path]) -> Iterator[LiveServer]:
    """The live server allowing the tests' PostgreSQL (on the services stack, the app's own
    database server: only an explicit entry allows it) and the test files' folder."""
    settings = live.settings
    before = (
        settings.SOURCES_ALLOWED_HOSTS,
        settings.SOURCES_FILE_DIRS,
        settings.SOURCES_CONNECT_TIMEOUT_SECONDS,
    )
    settings.SOURCES_ALLOWED_HOSTS = ["*", "127.0.0.1:5432"]
    settings.SOURCES_FILE_DIRS = [source_files[0].parent]
    # Where no database answers, a check answers when this is up: not 10 s per test.
    settings.SOURCES_CONNECT_TIMEOUT_SECONDS = 3
    yield live
    (
        settings.SOURCES_ALLOWED_HOSTS,
        settings.SOURCES_FILE_DIRS,
        settings.SOURCES_CONNECT_TIMEOUT_SECONDS,
    ) = before


def _add(api: Api, project: dict[str, Any], name: str, url: str, **extra: Any) -> dict[str, Any]:
    response = api.post(
        f"/projects/{project['id']}/sources", json={"name": name, "url": url, **extra}
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_a_postgresql_source_is_checked_listed_described_and_deleted(
    alice: Api, reachable: LiveServer, pg_source: ServerSource
) -> None:
    project = alice.project()
    source = _add(alice, project, "shop", pg_source.url(), description="The shop's orders")
    assert source["kind"] == "postgresql" and source["status"] == "ready", source
    assert source["access"] == "read_only_transaction"
    assert "read-only transaction" in source["status_detail"]
    assert source["display_url"] == (
        f"postgresql://{pg_source.writer}:***@127.0.0.1:5432/{pg_source.database}"
    )
    assert source["table_count"] == 1 and source["server_version"].startswith("15")

    listed = alice.get(f"/projects/{project['id']}/sources").json()
    assert listed["total"] == 1 and listed["items"][0] == source
    assert alice.get(f"/sources/{source['id']}").json() == source

    schema = alice.get(f"/sources/{source['id']}/schema").json()
    (orders,) = schema["tables"]
    assert (orders["schema"], orders["name"], orders["row_estimate"]) == (
        "public",
        "orders",
        ORDERS,
    )
    columns = {c["name"]: c for c in orders["columns"]}
    assert columns["amount"]["type"] == "numeric(10,2)" and columns["id"]["nullable"] is False
    assert schema["truncated"] is False

    described = alice.patch(
        f"/sources/{source['id']}/schema",
        json={
            "tables": [
                {
                    "name": "orders",
                    "description": "One row per order",
                    "columns": [{"name": "amount", "description": "In euros"}],
                }
            ]
        },
    )
    assert described.status_code == 200, described.text
    # A new check lists the tables again: the descriptions stay.
    check = alice.post(f"/sources/{source['id']}/check").json()
    assert check["ok"] is True and check["table_count"] == 1 and check["status"] == "ready"
    (orders,) = alice.get(f"/sources/{source['id']}/schema").json()["tables"]
    assert orders["description"] == "One row per order"
    assert {c["name"]: c["description"] for c in orders["columns"]}["amount"] == "In euros"

    unknown = alice.patch(f"/sources/{source['id']}/schema", json={"tables": [{"name": "nope"}]})
    assert unknown.status_code == 404 and unknown.json()["code"] == "table_not_found"
    column = {"tables": [{"name": "orders", "columns": [{"name": "nope", "description": "x"}]}]}
    unknown = alice.patch(f"/sources/{source['id']}/schema", json=column)
    assert unknown.status_code == 404 and unknown.json()["code"] == "column_not_found"

    assert alice.delete(f"/sources/{source['id']}").status_code == 204
    assert alice.get(f"/sources/{source['id']}").status_code == 404


def test_each_kind_says_how_it_is_kept_read_only(
    alice: Api,
    reachable: LiveServer,
    pg_source: ServerSource,
    mysql_source: ServerSource,
    source_files: tuple[Path, Path],
) -> None:
    project = alice.project()
    lite, duck = source_files
    reader = _add(alice, project, "reader", pg_source.url(role=pg_source.reader))
    maria = _add(alice, project, "maria", mysql_source.url())
    maria_reader = _add(alice, project, "maria-reader", mysql_source.url(role=mysql_source.reader))
    sqlite_file = _add(alice, project, "lite", f"sqlite:///{lite}")
    duck_file = _add(alice, project, "duck", f"duckdb:///{duck}")
    assert reader["access"] == "read_only_role", reader
    assert maria["access"] == "read_only_transaction", maria
    assert maria_reader["access"] == "read_only_role", maria_reader
    assert sqlite_file["access"] == duck_file["access"] == "read_only_file"
    for source in (reader, maria, maria_reader, sqlite_file, duck_file):
        assert source["status"] == "ready" and source["table_count"] == 1, source
        (orders,) = alice.get(f"/sources/{source['id']}/schema").json()["tables"]
        assert orders["name"] == "orders" and orders["row_estimate"] == ORDERS, (source, orders)

    superuser = _add(
        alice, project, "admin", f"postgresql://postgres@127.0.0.1/{pg_source.database}"
    )
    assert superuser["status"] == "refused" and "superuser" in superuser["status_detail"]
    root = _add(alice, project, "root", f"mysql://root@127.0.0.1/{mysql_source.database}")
    assert root["status"] == "refused" and "FILE" in root["status_detail"]


def test_the_apps_own_database_server_needs_an_explicit_entry(
    alice: Api, live: LiveServer, pg_source: ServerSource
) -> None:
    project = alice.project()
    source = _add(alice, project, "shop", pg_source.url())
    if live.settings.DATABASE_URL:  # the services stack: PostgreSQL is the app's own
        assert source["status"] == "refused", source
        assert "workbench's own database" in source["status_detail"]
        check = alice.post(f"/sources/{source['id']}/check").json()
        assert check["ok"] is False and "SOURCES_ALLOWED_HOSTS" in check["detail"]
    else:
        assert source["status"] == "ready", source
    live.settings.SOURCES_ALLOWED_HOSTS = ["db.example.com"]
    try:
        check = alice.post(f"/sources/{source['id']}/check").json()
    finally:
        live.settings.SOURCES_ALLOWED_HOSTS = ["*"]
    assert check["ok"] is False and "SOURCES_ALLOWED_HOSTS" in check["detail"]


def test_files_outside_the_allowed_folders_and_the_apps_own_are_refused(
    alice: Api, reachable: LiveServer, source_files: tuple[Path, Path]
) -> None:
    project = alice.project()
    lite, _ = source_files
    outside = _add(alice, project, "passwd", "sqlite:////etc/passwd")
    assert outside["status"] == "refused" and "not inside" in outside["status_detail"]
    escape = _add(alice, project, "escape", f"sqlite:///{lite.parent}/../../../etc/passwd")
    assert escape["status"] == "refused"
    link = lite.parent / "secret-link.db"
    link.unlink(missing_ok=True)
    link.symlink_to(Path(reachable.settings.DATA_DIR) / ".secret_key")
    linked = _add(alice, project, "linked", f"sqlite:///{link}")
    assert linked["status"] == "refused", linked
    reachable.settings.SOURCES_FILE_DIRS = [Path(reachable.settings.DATA_DIR)]
    own = _add(alice, project, "own", f"sqlite:///{reachable.settings.DATA_DIR}/.secret_key")
    assert own["status"] == "refused" and "workbench's own" in own["status_detail"]


def test_unreachable_sources_say_why(
    alice: Api, reachable: LiveServer, pg_source: ServerSource, mysql_source: ServerSource
) -> None:
    """A database that answered says why it refused, in its own whole words (the password
    itself masked); where none did, the sentence says what was there: a refusal, nothing
    within the connect timeout, or a server of another kind (real PostgreSQL and MariaDB
    behind the wrong URLs). On creation and on a check alike."""
    project = alice.project()
    wrong = _add(alice, project, "wrong", mysql_source.url(password="wrong-password"))
    assert wrong["status"] == "failed", wrong
    assert re.fullmatch(
        rf"MySQL at 127\.0\.0\.1:{mysql_source.port} refused the password of "
        rf"{mysql_source.writer}: Access denied for user '{mysql_source.writer}'@'[^']+' "
        r"\(using password: YES\)",
        wrong["status_detail"],
    ), wrong["status_detail"]
    closed_port = free_port()
    with Blackhole() as hole:
        expected = {
            f"mysql://u:p@127.0.0.1:{closed_port}/x": (
                f"127.0.0.1:{closed_port} refused the connection."
            ),
            "postgresql://u:p@no-such-host.invalid/x": (
                "The host name no-such-host.invalid does not resolve."
            ),
            f"postgresql://u:p@127.0.0.1:{mysql_source.port}/x": (
                f"Something answers at 127.0.0.1:{mysql_source.port}, but not PostgreSQL."
            ),
            f"mysql://u:p@127.0.0.1:{pg_source.port}/x": (
                f"Something answers at 127.0.0.1:{pg_source.port}, but not MySQL or MariaDB."
            ),
            f"postgresql://u:p@127.0.0.1:{hole.port}/x": (
                f"Nothing answered at 127.0.0.1:{hole.port} within 3 s."
            ),
        }
        for number, (url, sentence) in enumerate(expected.items()):
            source = _add(alice, project, f"unreachable-{number}", url)
            assert (source["status"], source["status_detail"]) == ("failed", sentence), source
            check = alice.post(f"/sources/{source['id']}/check")
            assert check.status_code == 200, check.text
            assert (check.json()["ok"], check.json()["detail"]) == (False, sentence)
    for said in [wrong["status_detail"], *expected.values()]:
        assert "TLS" not in said and "sslmode" not in said, said


def test_bad_urls_are_refused_with_a_sentence(alice: Api) -> None:
    project = alice.project()
    for url, said in [
        ("not a url", "not a database URL"),
        ("oracle://u:secret-pw@h/x", "PostgreSQL, MySQL/MariaDB, SQLite or DuckDB"),
        ("postgresql://u:secret-pw@h/x?sslkey=/etc/ssl/private/key.pem", "sslkey"),
        ("postgresql://u:secret-pw@h/x?sslmode=maybe", "sslmode must be one of"),
    ]:
        response = alice.post(f"/projects/{project['id']}/sources", json={"name": "x", "url": url})
        assert response.status_code == 400, response.text
        assert said in response.json()["detail"] and "secret-pw" not in response.text
    bad_name = alice.post(f"/projects/{project['id']}/sources", json={"name": "a b", "url": "x"})
    assert bad_name.status_code == 422


def test_names_are_unique_per_project(
    alice: Api, reachable: LiveServer, source_files: tuple[Path, Path]
) -> None:
    project = alice.project()
    lite, _ = source_files
    _add(alice, project, "lite", f"sqlite:///{lite}")
    again = alice.post(
        f"/projects/{project['id']}/sources", json={"name": "lite", "url": f"sqlite:///{lite}"}
    )
    assert again.status_code == 409 and again.json()["code"] == "source_name_taken"
    _add(alice, alice.project("Other"), "lite", f"sqlite:///{lite}")


def test_another_users_source_looks_exactly_like_a_missing_one(
    alice: Api, bob: Api, reachable: LiveServer, source_files: tuple[Path, Path]
) -> None:
    project = alice.project()
    source = _add(alice, project, "lite", f"sqlite:///{source_files[0]}")
    for method, suffix, body in [
        ("GET", "", None),
        ("PATCH", "", {"name": "mine"}),
        ("DELETE", "", None),
        ("POST", "/check", None),
        ("GET", "/schema", None),
        ("PATCH", "/schema", {"tables": []}),
    ]:
        theirs = bob.request(method, f"/sources/{source['id']}{suffix}", json=body)
        missing = bob.request(method, f"/sources/{uuid.uuid4()}{suffix}", json=body)
        assert theirs.status_code == missing.status_code == 404, (method, suffix)
        assert theirs.json() == missing.json()
    listed = bob.get(f"/projects/{project['id']}/sources")
    added = bob.post(f"/projects/{project['id']}/sources", json={"name": "x", "url": "sqlite:///x"})
    assert listed.status_code == added.status_code == 404
    assert alice.get(f"/sources/{source['id']}").json()["name"] == "lite"


def test_the_password_is_in_no_answer_log_line_or_row(
    alice: Api,
    reachable: LiveServer,
    mysql_source: ServerSource,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    password = mysql_source.password
    project = alice.project()
    answers = []
    created = alice.post(
        f"/projects/{project['id']}/sources", json={"name": "maria", "url": mysql_source.url()}
    )
    answers.append(created)
    source_id = created.json()["id"]
    separate = alice.post(
        f"/projects/{project['id']}/sources",
        json={
            "name": "separate",
            "url": f"mysql://{mysql_source.writer}@127.0.0.1/{mysql_source.database}",
            "password": password,
        },
    )
    assert separate.json()["status"] == "ready", separate.text
    answers += [
        separate,
        alice.get(f"/sources/{source_id}"),
        alice.get(f"/projects/{project['id']}/sources"),
        alice.post(f"/sources/{source_id}/check"),
        alice.get(f"/sources/{source_id}/schema"),
        # Pointing it elsewhere without a password keeps the password.
        alice.patch(
            f"/sources/{source_id}",
            json={"url": f"mysql://{mysql_source.writer}@127.0.0.1:3306/{mysql_source.database}"},
        ),
        # A failing login, whose error a driver might echo.
        alice.patch(f"/sources/{separate.json()['id']}", json={"password": password + "-wrong"}),
        alice.post(
            f"/projects/{project['id']}/sources",
            json={"name": "dsn", "url": f"postgresql://u:{password}@127.0.0.1:{free_port()}/x"},
        ),
    ]
    assert answers[6].json()["status"] == "ready", answers[6].text
    for response in answers:
        assert response.status_code < 500, response.text
        assert password not in response.text, response.request.url
    assert password not in caplog.text
    assert "source" in caplog.text  # the checks did log

    async def rows() -> list[str]:
        async with reachable.state.session_factory() as db:
            found = (await db.scalars(select(DataSource))).all()
            return [repr(vars(s)) for s in found]

    stored = reachable.call(rows())
    assert len(stored) == 3 and all(password not in row for row in stored)

    async def loaded() -> str:
        async with reachable.state.session_factory() as db:
            connections = await service.connections_of(
                db, uuid.UUID(project["id"]), reachable.settings
            )
            catalog = await service.catalog_of(db, uuid.UUID(project["id"]))
            assert connections["maria"].url.password.reveal() == password
            return repr(connections) + repr(catalog)

    assert password not in reachable.call(loaded())

"""Filling the server's storage (red team four, item 3): one user stored 16 files of 48 MiB in a
minute with no limit anywhere. Here, with quotas small enough to reach quickly (files of
6 MiB against a project quota of 24 MiB and a user quota of 40 MiB), the same user stores
file after file across names, versions and projects, two at the same moment, and is
stopped with 413 and a sentence naming the quota and what fills it; nothing of a refused
upload stays in storage; an administrator's override raises the quota of that user only.
On both stacks (SQLite and a local folder; PostgreSQL, Redis and S3).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.conftest import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    STACKS,
    Api,
    services_overrides,
    stack_settings,
)
from tests.support import services
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

MIB = 1 << 20
FILE = 6 * MIB
PROJECT_QUOTA_MB = 24
USER_QUOTA_MB = 40


@pytest.fixture(scope="module", params=STACKS)
def quota_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM
) -> Iterator[LiveServer]:
    overrides: dict[str, Any] = {
        "PROJECT_STORAGE_QUOTA_MB": PROJECT_QUOTA_MB,
        "USER_STORAGE_QUOTA_MB": USER_QUOTA_MB,
        "MAX_UPLOAD_BYTES": 64 * MIB,
    }
    database = None
    if request.param == "services":
        # Its own database: the worker's shared one may already hold an 'alice'.
        postgres_url, database = services.create_postgres_database()
        overrides |= services_overrides(
            postgres_url,
            request.getfixturevalue("redis_url"),
            request.getfixturevalue("s3_server"),
            "workbench-quota",
        )
    data_dir = tmp_path_factory.mktemp(f"quota-{request.param}")
    live = LiveServer(
        stack_settings(str(request.param), data_dir, LLM_API_BASE=llm.api_base, **overrides)
    ).start()
    yield live
    live.stop()
    if database:
        services.drop_postgres_database(database)


@pytest.fixture
def admin(quota_server: LiveServer) -> Iterator[Api]:
    with Api(quota_server).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as client:
        yield client


def new_user(admin: Api, name: str) -> Api:
    return admin.new_user(f"{name}@example.com")


def blob(number: int) -> bytes:
    return bytes([number % 251]) * FILE


def stored_keys(live: LiveServer) -> list[str]:
    return sorted(live.call(live.state.storage.list_keys("projects/")))


def refused(response: httpx.Response) -> str:
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["code"] == "storage_quota_exceeded", body
    return str(body["detail"])


def test_a_user_filling_storage_is_stopped_by_the_quotas(
    quota_server: LiveServer, admin: Api
) -> None:
    alice = new_user(admin, "alice")
    first = alice.project("Sales")
    for number, name in enumerate(["a.zip", "b.zip", "c.zip", "a.zip"]):
        assert alice.upload(first["id"], name, blob(number)).status_code == 201
    before = stored_keys(quota_server)

    # The project holds 24 MiB (three names, four versions): its quota.
    detail = refused(alice.upload(first["id"], "d.zip", blob(9)))
    assert detail == (
        "This upload would take project 'Sales' past its 24.0 MB storage quota: 24.0 MB is "
        "used by 3 files (4 versions), 0 B by artifacts and snapshots. Delete files or old "
        "versions, or ask an admin to raise it (PROJECT_STORAGE_QUOTA_MB)."
    )
    # A new version of a kept name is refused the same way.
    refused(alice.upload(first["id"], "b.zip", blob(10)))
    listed = alice.get(f"/projects/{first['id']}/files").json()
    assert sorted(f["name"] for f in listed["items"]) == ["a.zip", "b.zip", "c.zip"]
    assert stored_keys(quota_server) == before

    # Another project: 6 MiB, then three uploads at the same moment where one fits (the
    # user has 40 - 30 = 10 MiB left): one is stored, the others refused for the user's quota.
    second = alice.project("Stock")
    assert alice.upload(second["id"], "e.zip", blob(11)).status_code == 201
    with ThreadPoolExecutor(3) as pool:
        answers = list(
            pool.map(lambda n: alice.upload(second["id"], f"f{n}.zip", blob(12 + n)), range(3))
        )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201, 413, 413], [a.text for a in answers]
    detail = refused(next(a for a in answers if a.status_code == 413))
    assert detail == (
        "This upload would take your storage past its 40.0 MB quota: 36.0 MB is used by 5 "
        "files (6 versions) you uploaded in 2 projects, 0 B by the artifacts and snapshots of "
        "your questions. Delete files or old versions, or ask an admin to raise your quota."
    )
    mine = alice.get("/auth/me/usage").json()
    assert (mine["used_bytes"], mine["quota_bytes"]) == (36 * MIB, USER_QUOTA_MB * MIB)
    assert (mine["files"], mine["versions"], mine["projects"]) == (5, 6, 2)
    project = alice.get(f"/projects/{first['id']}/usage").json()
    assert (project["used_bytes"], project["quota_bytes"]) == (24 * MIB, PROJECT_QUOTA_MB * MIB)
    assert (project["files_bytes"], project["files"], project["versions"]) == (24 * MIB, 3, 4)
    assert len(stored_keys(quota_server)) == 6

    # The admin raises alice's quota: she stores more; bob keeps the server's quota.
    raised = admin.patch(
        f"/users/{alice.get('/auth/me').json()['id']}", json={"storage_quota_mb": 100}
    )
    assert raised.status_code == 200, raised.text
    assert raised.json()["storage_quota_mb"] == 100
    assert alice.upload(second["id"], "g.zip", blob(20)).status_code == 201
    assert alice.get("/auth/me/usage").json()["quota_bytes"] == 100 * MIB

    bob = new_user(admin, "bob")
    own = [bob.project("Bob one"), bob.project("Bob two")]
    for number in range(6):
        target = own[number // 4]["id"]
        assert bob.upload(target, f"{number}.zip", blob(30 + number)).status_code == 201
    detail = refused(bob.upload(own[1]["id"], "more.zip", blob(40)))
    assert detail.startswith("This upload would take your storage past its 40.0 MB quota: ")
    assert bob.get("/auth/me/usage").json()["quota_bytes"] == USER_QUOTA_MB * MIB


def test_an_upload_declared_past_the_quota_is_refused_before_it_streams(
    quota_server: LiveServer, admin: Api
) -> None:
    carol = new_user(admin, "carol")
    project = carol.project("Big")
    before = stored_keys(quota_server)
    detail = refused(carol.upload(project["id"], "big.zip", b"x" * (30 * MIB)))
    assert detail.startswith("This upload would take project 'Big' past its 24.0 MB storage quota")
    assert stored_keys(quota_server) == before
    assert carol.get(f"/projects/{project['id']}/files").json()["total"] == 0


def test_only_an_admin_sets_a_quota(quota_server: LiveServer, admin: Api) -> None:
    dave = new_user(admin, "dave")
    me = dave.get("/auth/me").json()
    answer = dave.patch(f"/users/{me['id']}", json={"storage_quota_mb": 100000})
    assert answer.status_code == 403, answer.text
    assert dave.get("/auth/me/usage").json()["quota_bytes"] == USER_QUOTA_MB * MIB

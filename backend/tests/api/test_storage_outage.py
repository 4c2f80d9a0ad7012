"""Storage failing in the middle of an upload: no orphan row, no partial object.

The failures are real: a TCP proxy in front of S3 that cuts every connection, and a
local object folder on a tmpfs that fills up.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.infra.storage import S3Storage
from tests.api.test_service_outage import READY_WITHIN
from tests.conftest import Api, reset_state, services_overrides, stack_settings
from tests.support.proxy import CuttableProxy
from tests.support.server import LiveServer

CSV = b"id,value\n" + b"".join(
    b"%d,%d\n" % (i, i * 7) for i in range(450_000)
)  # ~6 MB, under the 8 MB test limit


@pytest.fixture
def s3_behind_proxy(
    tmp_path: Path, postgres_url: str, redis_url: str, s3_server
) -> Iterator[tuple[LiveServer, CuttableProxy]]:  # type: ignore[no-untyped-def]
    host, port = s3_server.endpoint.split(":")
    proxy = CuttableProxy(host, int(port)).start()
    overrides = services_overrides(postgres_url, redis_url, s3_server, "outage-test")
    overrides["S3_ENDPOINT"] = proxy.address
    live = LiveServer(stack_settings("services", tmp_path, **overrides)).start()
    live.call(reset_state(live))
    yield live, proxy
    proxy.restore()
    live.stop()
    proxy.stop()


def test_s3_cut_mid_upload_leaves_no_row_and_no_object(s3_behind_proxy, s3_server) -> None:  # type: ignore[no-untyped-def]
    live, proxy = s3_behind_proxy
    with Api(live).as_user("admin@example.com", "admin-password-1") as admin:
        project = admin.project()
        proxy.sent = 0
        proxy.cut_after_bytes = 2 * 1024 * 1024
        response = admin.upload(project["id"], "numbers.csv", CSV)
        assert response.status_code == 503
        assert response.json()["code"] == "storage_unavailable"
        assert "nothing was kept" in response.json()["detail"]
        assert admin.get(f"/projects/{project['id']}/files").json()["total"] == 0

        ready = httpx.get(f"{live.url}/readyz", timeout=READY_WITHIN)
        assert ready.status_code == 503
        assert ready.json()["checks"]["storage"].startswith("error")

        proxy.restore()
        # Seen directly on the S3 server, not through the proxy: nothing was left.
        direct = S3Storage(
            stack_settings(
                "services",
                live.settings.DATA_DIR,
                **services_overrides("", "", s3_server, "outage-test"),
            )
        )
        assert live.call(direct.list_keys()) == []
        retry = admin.upload(project["id"], "numbers.csv", CSV)
        assert retry.status_code == 201
        assert admin.get(f"/files/{retry.json()['id']}/content").content == CSV


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
    )
    if result.returncode != 0:
        pytest.fail(
            "This test fills a 3 MB tmpfs to make the local object store fail; mounting it "
            f"needs root: {result.stderr.decode().strip()}",
            pytrace=False,
        )
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_local_disk_full_mid_upload_leaves_no_row_and_no_file(
    tmp_path: Path, tiny_disk: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    os.symlink(tiny_disk, data_dir / "objects")
    live = LiveServer(stack_settings("embedded", data_dir)).start()
    try:
        live.call(reset_state(live))
        with Api(live).as_user("admin@example.com", "admin-password-1") as admin:
            project = admin.project()
            response = admin.upload(project["id"], "numbers.csv", CSV)
            assert response.status_code == 503
            assert "No space left" in response.json()["detail"]
            assert admin.get(f"/projects/{project['id']}/files").json()["total"] == 0
            leftovers = [p for p in tiny_disk.rglob("*") if p.is_file()]
            assert leftovers == []
            small = admin.upload(project["id"], "small.csv", b"a,b\n1,2\n")
            assert small.status_code == 201
    finally:
        live.stop()

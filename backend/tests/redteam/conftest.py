"""A server to attack, with things worth stealing and tripwires around it.

The `target` fixture has one server per mode:
- "local": the backend starts bubblewrapped workers itself, as `make run` does;
- "service": a separate sandbox service process runs them, as docker compose does;
- "compose": the stack deployed with docker compose by `make test-deploy` (one backend,
  its sandbox service, Postgres, Redis and S3 in containers), reached through its public
  port. Only deploy/test/run.sh sets WORKBENCH_DEPLOY_URL; where it is set, "compose" is
  the only mode, and `make test-backend` runs the other two.

Around each server lie a canary secret (in the backend's environment), a canary file, a
markers folder that must stay empty, another session's workspace with a secret in it and a
listener that must get no connection (tests/redteam/surroundings.py: on this machine, or
in the containers of the deployed stack). Every payload is asked as a real question through
the API, with the scripted LLM writing the payload as its code.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, LLM_KEY, TEST_SECRET, Api, stack_settings
from tests.redteam.surroundings import ComposeSurroundings, LocalSurroundings, Surroundings
from tests.support.deployment import DeployedServer, Deployment, deployed, gateway_llm, sh
from tests.support.llm import ScriptedLLM
from tests.support.sandbox_service import SandboxServiceProcess
from tests.support.server import LiveServer

CANARY_ENV = "WORKBENCH_REDTEAM_CANARY"
DEPLOYED = deployed()
MODES = ["compose"] if DEPLOYED else ["local", "service"]
# The red team's settings, in every mode (run.sh starts the deployed stack with them).
SETTINGS: dict[str, int] = {
    "SANDBOX_DISK_MB": 64,
    # What a step, and a session in all, may keep of charts, tables and files.
    "SANDBOX_ARTIFACTS_MB": 16,
    "SESSION_ARTIFACTS_MB": 40,
    "SANDBOX_MEMORY_MB": 768,
    # Limits must be reached by what they measure, not by a slow machine.
    "SANDBOX_STEP_TIMEOUT_SECONDS": 60,
    "AGENT_MAX_STEPS": 3,
}
# Attacks on `target` that need the backend's settings changed, which a deployed stack's are
# not: the repair fan-out needs four steps, the deployed test stack allows three. They run
# in process, against both sandboxes.
IN_PROCESS_ONLY = {"test_a_strategy_cannot_touch_the_runs_state_unless_chosen"}
# The attacks of test_web_attacks.py that also run through the deployed stack: they need
# only its API (and the scripted model). The others cannot: the login lockout tests pose
# as many client addresses by binding loopback addresses, and through Docker's published
# port every connection reaches the backend from the bridge's gateway; the two notebook
# host tests compare with the settings of a server they start or hold in this process;
# the preview fair-share test measures one in-process server's preview slots and timing.
COMPOSE_WEB_ATTACKS = {
    "test_csv_downloads_escape_formulas_in_headers_and_cells",
    "test_excel_downloads_hold_no_formula_in_headers_or_cells",
    "test_a_reports_attached_csv_holds_no_formula",
    "test_changing_a_password_revokes_the_users_api_tokens",
    "test_an_admin_password_reset_revokes_the_users_api_tokens",
    "test_an_api_token_cannot_mint_api_tokens",
    "test_an_admin_lists_and_revokes_a_users_tokens_without_disabling_them",
    "test_exports_fetch_no_remote_image_when_opened",
    "test_a_notebooks_charts_fetch_nothing_remote_when_opened",
    "test_the_notebook_says_it_runs_llm_code_unsandboxed_and_waits_for_consent",
}


@dataclass
class Target:
    """The server under attack and what must stay untouched around it."""

    mode: str
    live: LiveServer | DeployedServer
    api: Api
    surroundings: Surroundings
    project_id: str
    sessions: list[str] = field(default_factory=list)

    def session(self) -> str:
        response = self.api.post(f"/projects/{self.project_id}/sessions", json={"title": "x"})
        assert response.status_code == 201, response.text
        session_id = str(response.json()["id"])
        self.sessions.append(session_id)
        return session_id


def prepare(api: Api) -> tuple[str, str]:
    """A project with a file, and another session of it: their ids."""
    project = api.project("Red team")
    upload = api.upload(project["id"], "sales.csv", b"region,amount\nnorth,10\n")
    assert upload.status_code == 201
    other = api.post(f"/projects/{project['id']}/sessions", json={"title": "other"})
    assert other.status_code == 201, other.text
    return str(project["id"]), str(other.json()["id"])


@pytest.fixture(scope="module", params=MODES)
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM
) -> Iterator[Target]:
    mode = str(request.param)
    if mode == "compose":
        yield from deployed_target()
        return
    root = tmp_path_factory.mktemp(f"redteam-{mode}")
    canary = f"canary-{secrets.token_hex(12)}"
    data_dir = root / "data"
    data_dir.mkdir()
    overrides: dict[str, object] = dict(SETTINGS)
    service = None
    if mode == "service":
        service = SandboxServiceProcess(root / "service").start()
        (data_dir / "workspaces").symlink_to(service.workspaces, target_is_directory=True)
        overrides["SANDBOX_SERVICE_SOCKET"] = str(service.socket)
    previous = os.environ.get(CANARY_ENV)
    os.environ[CANARY_ENV] = canary  # the backend runs in this process: its environment
    settings = stack_settings("embedded", data_dir, LLM_API_BASE=llm.api_base, **overrides)
    live = LiveServer(settings).start()
    surroundings = None
    try:
        with Api(live) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as api:
            project_id, other = prepare(api)
            secrets_of_backend = {"LLM key": LLM_KEY, "signing key": TEST_SECRET}
            surroundings = LocalSurroundings(root, canary, data_dir, secrets_of_backend, other)
            yield Target(mode, live, api, surroundings, project_id)
    finally:
        if surroundings is not None:
            surroundings.close()
        live.stop()
        if service is not None:
            service.stop()
        if previous is None:
            os.environ.pop(CANARY_ENV, None)
        else:
            os.environ[CANARY_ENV] = previous


def deployed_target() -> Iterator[Target]:
    """The stack run.sh deployed, checked first to run with the red team's settings."""
    deployment = Deployment.from_env()
    backend = deployment.container("backend")
    env = json.loads(sh("docker", "inspect", "--format", "{{json .Config.Env}}", backend).stdout)
    wrong = {n: v for n, v in SETTINGS.items() if f"{n}={v}" not in env}
    assert not wrong, (
        f"the deployed backend does not run with the red team's settings {wrong}: "
        f"deploy/test/run.sh starts it with them; its environment: {env}"
    )
    canary = f"canary-{secrets.token_hex(12)}"
    live = DeployedServer(deployment.url)
    with Api(live) as anon, anon.as_user(deployment.admin_email, deployment.admin_password) as api:
        project_id, other = prepare(api)
        surroundings = ComposeSurroundings(deployment, canary, other)
        try:
            yield Target("compose", live, api, surroundings, project_id)
        finally:
            surroundings.close()


if DEPLOYED:
    # The fixtures of tests/conftest.py that test_web_attacks.py uses, on the deployed
    # stack: its model on the bridge, its URL, its administrator, and users that are new
    # for every test (the stack is not reset between tests).

    @pytest.fixture(scope="session")
    def llm() -> Iterator[ScriptedLLM]:
        with gateway_llm(Deployment.from_env()) as server:
            yield server

    @pytest.fixture
    def live(llm: ScriptedLLM) -> DeployedServer:
        llm.script()
        return DeployedServer(Deployment.from_env().url)

    @pytest.fixture
    def admin(anon: Api) -> Iterator[Api]:
        deployment = Deployment.from_env()
        with anon.as_user(deployment.admin_email, deployment.admin_password) as client:
            yield client

    @pytest.fixture
    def alice(admin: Api) -> Iterator[Api]:
        with admin.new_user(f"alice-{secrets.token_hex(6)}@example.com") as client:
            yield client

    @pytest.fixture
    def bob(admin: Api) -> Iterator[Api]:
        with admin.new_user(f"bob-{secrets.token_hex(6)}@example.com") as client:
            yield client

    def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
        """Through the deployed stack: the attacks on `target`, and those web attacks."""
        here = Path(__file__).parent
        kept, dropped = [], []
        for item in items:
            name = getattr(item, "originalname", item.name)
            runs = "target" in getattr(item, "fixturenames", ()) or name in COMPOSE_WEB_ATTACKS
            runs = runs and name not in IN_PROCESS_ONLY
            (kept if runs or here not in item.path.parents else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

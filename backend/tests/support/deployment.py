"""The stack `make test-deploy` deployed: where it answers and how to reach into it.

deploy/test/run.sh brings docker-compose.yml up and exports the environment read here;
tests/deploy/deploy_checks.py and the red team's "compose" mode (tests/redteam) use it.
Without that environment, `Deployment.from_env()` fails rather than skips.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tests.support.llm import ScriptedLLM, final_reply

URL_VARIABLE = "WORKBENCH_DEPLOY_URL"
REQUIRED = (
    URL_VARIABLE,
    "WORKBENCH_DEPLOY_COMPOSE",
    "WORKBENCH_DEPLOY_SCALE_FILES",
    "WORKBENCH_DEPLOY_LLM_BIND",
    "ADMIN_EMAIL",
    "ADMIN_PASSWORD",
)
# Values of the backend's environment that must never reach a worker nor a user (run.sh
# sets them for the backend).
SECRET_VARIABLES = (
    "SECRET_KEY",
    "ADMIN_PASSWORD",
    "LLM_API_KEY",
    "POSTGRES_PASSWORD",
    "S3_SECRET_KEY",
)


def deployed() -> bool:
    """Whether this run goes through a deployed stack (only run.sh sets its URL)."""
    return bool(os.environ.get(URL_VARIABLE))


def sh(*args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command, printed first; its failure (when `check`) is an assertion error."""
    print("$", " ".join(args), flush=True)
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited {done.returncode}:\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


@dataclass(frozen=True)
class ObjectStore:
    """The stack's S3 service, as published on this host (docker-compose.infra.yml)."""

    endpoint: str
    access_key: str
    secret_key: str
    bucket: str


@dataclass(frozen=True)
class Deployment:
    """The deployed stack, as run.sh describes it in the environment."""

    url: str
    compose_command: list[str]
    scale_files: list[str]
    llm_host: str
    llm_port: int
    admin_email: str
    admin_password: str
    s3: ObjectStore
    secrets: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> Deployment:
        missing = [name for name in REQUIRED if not os.environ.get(name)]
        if missing:
            raise RuntimeError(
                f"{', '.join(missing)} unset: these tests run through `make test-deploy` "
                "(deploy/test/run.sh), which deploys the stack first"
            )
        host, port = os.environ["WORKBENCH_DEPLOY_LLM_BIND"].rsplit(":", 1)
        if not host:
            raise RuntimeError("WORKBENCH_DEPLOY_LLM_BIND names no address")
        return cls(
            url=os.environ[URL_VARIABLE],
            compose_command=shlex.split(os.environ["WORKBENCH_DEPLOY_COMPOSE"]),
            scale_files=shlex.split(os.environ["WORKBENCH_DEPLOY_SCALE_FILES"]),
            llm_host=host,
            llm_port=int(port),
            admin_email=os.environ["ADMIN_EMAIL"],
            admin_password=os.environ["ADMIN_PASSWORD"],
            # The defaults of docker-compose.infra.yml where run.sh sets nothing.
            s3=ObjectStore(
                endpoint=f"127.0.0.1:{os.environ.get('MINIO_API_PORT', '9000')}",
                access_key=os.environ.get("S3_ACCESS_KEY", "minioadmin"),
                secret_key=os.environ.get("S3_SECRET_KEY", "minioadmin"),
                bucket=os.environ.get("S3_BUCKET", "workbench"),
            ),
            secrets={n: os.environ[n] for n in SECRET_VARIABLES if os.environ.get(n)},
        )

    def compose(
        self, *args: str, scale: bool = False, timeout: float = 900, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`docker compose` on the stack's project (with the scale file, if `scale`)."""
        files = self.scale_files if scale else []
        return sh(*self.compose_command, *files, *args, timeout=timeout, check=check)

    def container(self, service: str) -> str:
        """The id of the one running container of `service`."""
        ids = self.compose("ps", "-q", service).stdout.split()
        assert len(ids) == 1, f"{service}: expected one container, found {ids}"
        return ids[0]


@dataclass(frozen=True)
class DeployedServer:
    """What tests.conftest.Api needs of a server: where it answers."""

    url: str


@contextmanager
def gateway_llm(deployment: Deployment) -> Iterator[ScriptedLLM]:
    """The scripted model where the backend's container reaches it (the Docker bridge's
    gateway, not loopback); the stack's LLM_API_BASE names that address and port."""
    server = ScriptedLLM(host=deployment.llm_host, port=deployment.llm_port).start()
    server.responder = final_reply("'the script has no more replies'")
    try:
        yield server
    finally:
        server.stop()

"""The deployment files stay in step with the settings and with each other.

Docker does not run in CI, so these tests read the files: .env.example and the backend
service of docker-compose.yml must name every field of Settings, the compose defaults must
make valid settings, the compose files must match the Compose schema, the infrastructure
and the image must have what the brief asks, and the sandbox service must be isolated as
docs/sandbox.md says: no secrets, no network, only the workspaces, and
Docker's seccomp profile with only what bubblewrap needs added.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema
import pytest
import yaml

from app.config import SandboxIsolation, Settings
from app.runs.workspace import manifest_path, workspace_dir
from app.sandbox.interface import SandboxLimits

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SETTINGS = sorted(Settings.model_fields)
PROVIDER_KEYS = ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
INFRA_SERVICES = ("postgres", "redis", "minio", "minio-init")

SANDBOX_SOCKET = "/run/workbench-sandbox/sandbox.sock"
SANDBOX_WORKSPACES = "/workspaces"
# Docker's default seccomp profile (deploy/seccomp/docker-default.json), byte for byte: the
# default.json of github.com/moby/profiles seccomp v0.2.3. A new upstream file changes this.
DOCKER_DEFAULT_SECCOMP_SHA256 = "536529b665dd0972c37bfb569f5d4ac8a53592e7b00752bc39ff063ca9864c74"
CLONE_NEWUSER = 0x10000000
_NEWUSER_ONLY = {"value": CLONE_NEWUSER, "valueTwo": CLONE_NEWUSER, "op": "SCMP_CMP_MASKED_EQ"}
# What deploy/sandbox-seccomp.json adds to Docker's default, comments aside: bubblewrap's
# namespaces (clone and unshare of a new user namespace only), its mounts and its hostname.
SECCOMP_ADDITIONS = [
    {
        "names": ["clone"],
        "action": "SCMP_ACT_ALLOW",
        "args": [{"index": 0, **_NEWUSER_ONLY}],
        "excludes": {"arches": ["s390", "s390x"]},
    },
    {
        "names": ["clone"],
        "action": "SCMP_ACT_ALLOW",
        "args": [{"index": 1, **_NEWUSER_ONLY}],
        "includes": {"arches": ["s390", "s390x"]},
    },
    {"names": ["unshare"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, **_NEWUSER_ONLY}]},
    {"names": ["mount", "pivot_root", "sethostname", "umount2"], "action": "SCMP_ACT_ALLOW"},
]
# The whole environment the sandbox service may have: nothing secret, nothing that points
# at another service.
SANDBOX_ENVIRONMENT = {
    "SANDBOX_ISOLATION",
    "SANDBOX_BWRAP",
    "SANDBOX_SERVICE_MAX_WORKERS",
    "SANDBOX_FORK_SERVER",
    "LOG_LEVEL",
    "WORKBENCH_SANDBOX_CACHE",
}
_SECRET_LOOKING = re.compile(
    r"KEY|SECRET|PASSWORD|PASSWD|TOKEN|CREDENTIAL|AUTH|_URL|URI|DSN|ENDPOINT|DATABASE|"
    r"REDIS|POSTGRES|MINIO|S3_|LLM_|ADMIN|OPENAI|ANTHROPIC|OPENROUTER",
)

# ${NAME}, ${NAME-default} or ${NAME:-default} whose default holds no further ${...}.
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^${}]*))?\}")


class _ComposeLoader(yaml.SafeLoader):
    """YAML with compose's `!reset` tag (an override that empties a value): read as empty."""


_ComposeLoader.add_constructor("!reset", lambda loader, node: [] if node.value == [] else None)


def _compose(name: str) -> dict[str, Any]:
    loaded = yaml.load((ROOT / name).read_text(), Loader=_ComposeLoader)
    assert isinstance(loaded, dict), f"{name} is not a YAML mapping"
    return loaded


def _defaults(value: str) -> str:
    """Interpolate like docker compose does with no variable set: every default applies."""
    while (resolved := _VARIABLE.sub(lambda m: m[2] or "", value)) != value:
        value = resolved
    assert "${" not in value, f"cannot interpolate {value!r}"
    return value


def _interpolated(node: Any) -> Any:
    """A whole compose document with every ${...} at its default, as compose would see it."""
    if isinstance(node, dict):
        return {key: _interpolated(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_interpolated(value) for value in node]
    if isinstance(node, str):
        return _defaults(node)
    return node


def _backend() -> dict[str, Any]:
    return _compose("docker-compose.yml")["services"]["backend"]


def _sandbox() -> dict[str, Any]:
    return _compose("docker-compose.yml")["services"]["sandbox"]


def _volumes(service: dict[str, Any]) -> dict[str, str]:
    """A service's volumes (short syntax) as {target: source}."""
    mounts: dict[str, str] = {}
    for volume in service.get("volumes", []):
        assert isinstance(volume, str), f"write volumes in the short syntax: {volume!r}"
        source, target, *_ = volume.split(":")
        mounts[target] = source
    return mounts


def _option(service: dict[str, Any], name: str) -> list[str]:
    """The values of a security_opt, e.g. "seccomp" or "apparmor" (after interpolation)."""
    values = []
    for option in service.get("security_opt", []):
        key, _, value = _defaults(option).replace(":", "=", 1).partition("=")
        if key == name:
            values.append(value)
    return values


def _dockerfile_user() -> str:
    dockerfile = (ROOT / "backend" / "Dockerfile").read_text()
    return re.findall(r"^USER\s+(\S+)", dockerfile, flags=re.MULTILINE)[-1]


def _backend_environment() -> dict[str, str | None]:
    environment = _backend()["environment"]
    assert isinstance(environment, dict), "write the backend's environment as a mapping"
    return {k: None if v is None else str(v) for k, v in environment.items()}


def _clear_settings_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)


def test_env_example_names_every_setting() -> None:
    text = (ROOT / ".env.example").read_text()
    missing = [
        name
        for name in (*SETTINGS, *PROVIDER_KEYS)
        if not re.search(rf"^(# ?)?{name}=", text, flags=re.MULTILINE)
    ]
    assert not missing, f".env.example lacks {missing}"


def test_env_example_copied_unchanged_keeps_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear_settings_env(monkeypatch)
    from_example = Settings(_env_file=ROOT / ".env.example")  # type: ignore[call-arg]
    assert from_example.model_dump() == Settings(_env_file=None).model_dump()  # type: ignore[call-arg]
    assert from_example.is_embedded_db


COMPOSE_FILES = (
    "docker-compose.infra.yml",
    "docker-compose.yml",
    "docker-compose.scale.yml",
    "docker-compose.monitoring.yml",
)


def test_compose_files_parse() -> None:
    for name in COMPOSE_FILES:
        assert isinstance(_compose(name).get("services"), dict), f"{name} has no services"


def test_compose_files_match_the_compose_schema() -> None:
    """What `docker compose config` checks first, without Docker: keys, types, shapes."""
    schema = json.loads((DEPLOY / "schema" / "compose-spec.json").read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    for name in COMPOSE_FILES:
        document = _compose(name)
        for variant in (document, _interpolated(document)):
            errors = [
                f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
                for error in validator.iter_errors(variant)
            ]
            assert not errors, f"{name} does not match the Compose schema: {errors}"


def test_scaling_puts_a_proxy_in_front_of_every_backend() -> None:
    """`--scale backend=N` with docker-compose.scale.yml: no backend publishes a port (N
    could not share one), the proxy does, and it keeps event streams and uploads whole. The
    backends believe the client's address the proxy forwards, and only the proxy's: it
    writes the address it sees, alone (nothing a client wrote passes), from a network the
    backends name in TRUSTED_PROXIES."""
    scale = _compose("docker-compose.scale.yml")["services"]
    assert scale["backend"]["ports"] == []
    trusted = _defaults(scale["backend"]["environment"]["TRUSTED_PROXIES"])
    assert Settings(_env_file=None, TRUSTED_PROXIES=trusted).TRUSTED_PROXIES  # type: ignore[call-arg]
    assert _defaults(_backend()["environment"]["TRUSTED_PROXIES"]) == ""  # no proxy: none
    proxy = scale["proxy"]
    assert [_defaults(p) for p in proxy["ports"]] == ["127.0.0.1:8000:8080"]
    assert proxy["depends_on"] == {"backend": {"condition": "service_healthy"}}
    mount = "./deploy/nginx/workbench.conf:/etc/nginx/conf.d/default.conf:ro"
    assert proxy["volumes"] == [mount]
    conf = (DEPLOY / "nginx" / "workbench.conf").read_text()
    for directive in (
        "listen 8080;",
        "resolver 127.0.0.11",  # re-resolved: replicas added later are found
        "set $backend http://backend:8000;",
        "proxy_pass $backend;",
        "proxy_buffering off;",
        "proxy_request_buffering off;",
        "proxy_read_timeout 3600s;",
        "client_max_body_size 10300m;",
        "proxy_set_header X-Forwarded-For $remote_addr;",
    ):
        assert directive in conf, directive
    assert Settings(_env_file=None).MAX_UPLOAD_BYTES < 10300 * 1024**2  # type: ignore[call-arg]


def test_infra_defines_the_services_with_healthchecks() -> None:
    services = _compose("docker-compose.infra.yml")["services"]
    assert set(INFRA_SERVICES) <= set(services)
    for name in ("postgres", "redis", "minio"):
        assert services[name].get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        assert any(":/" in volume for volume in services[name]["volumes"]), f"{name}: no volume"
    assert "pg_isready" in str(services["postgres"]["healthcheck"]["test"])
    assert "ping" in services["redis"]["healthcheck"]["test"]
    init = services["minio-init"]
    assert init["depends_on"]["minio"]["condition"] == "service_healthy"
    assert "mc mb --ignore-existing" in str(init["command"])
    assert _defaults(init["environment"]["S3_BUCKET"]) == "workbench"


def test_ports_are_published_on_localhost_only() -> None:
    services = {
        **_compose("docker-compose.infra.yml")["services"],
        **_compose("docker-compose.yml")["services"],
    }
    published = {
        _defaults(str(port)) for service in services.values() for port in service.get("ports", [])
    }
    assert published == {
        "127.0.0.1:5432:5432",
        "127.0.0.1:6379:6379",
        "127.0.0.1:9000:9000",
        "127.0.0.1:9001:9001",
        "127.0.0.1:8000:8000",
    }


def test_backend_receives_every_setting() -> None:
    environment = _backend_environment()
    missing = [
        name
        for name in (*SETTINGS, *PROVIDER_KEYS, "LITELLM_LOCAL_MODEL_COST_MAP")
        if name not in environment
    ]
    assert not missing, f"docker-compose.yml does not pass {missing} to the backend"


def test_backend_defaults_are_valid_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear_settings_env(monkeypatch)
    for name, value in _backend_environment().items():
        if value is not None:  # `NAME:` without value: absent unless the user sets it
            monkeypatch.setenv(name, _defaults(value))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]

    process = {"host": settings.HOST, "port": settings.PORT, "data_dir": settings.DATA_DIR}
    assert process == {"host": "0.0.0.0", "port": 8000, "data_dir": Path("/data")}
    assert settings.DATABASE_URL == (
        "postgresql+asyncpg://workbench:workbench@postgres:5432/workbench"
    )
    assert settings.REDIS_URL == "redis://redis:6379/0"
    assert settings.S3_ENDPOINT == "minio:9000"
    assert settings.S3_SECURE is False
    # The backend logs in to MinIO with the credentials MinIO was started with.
    minio = _compose("docker-compose.infra.yml")["services"]["minio"]["environment"]
    root = (_defaults(minio["MINIO_ROOT_USER"]), _defaults(minio["MINIO_ROOT_PASSWORD"]))
    credentials = (settings.S3_ACCESS_KEY, settings.S3_SECRET_KEY)
    assert credentials == root
    assert settings.ADMIN_EMAIL is None and settings.ADMIN_PASSWORD is None
    # Analysis runs in the sandbox service, never in the backend's container.
    assert Path(SANDBOX_SOCKET) == settings.SANDBOX_SERVICE_SOCKET
    assert settings.SANDBOX_ISOLATION is SandboxIsolation.required
    # One backend process per CPU, never more than the sandbox workers they share.
    assert settings.WEB_CONCURRENCY == "auto"
    cpus = len(os.sched_getaffinity(0))
    assert settings.web_processes == min(cpus, settings.SANDBOX_MAX_WORKERS or cpus)


def test_the_image_runs_a_backend_process_per_cpu_and_embedded_runs_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dockerfile = (ROOT / "backend" / "Dockerfile").read_text()
    assert re.search(r"^\s+WEB_CONCURRENCY=auto\b", dockerfile, flags=re.MULTILINE)
    _clear_settings_env(monkeypatch)
    monkeypatch.setenv("WEB_CONCURRENCY", "8")
    monkeypatch.setenv("SANDBOX_MAX_WORKERS", "16")
    # SQLite and in-process events: one process, whatever is asked.
    assert Settings(_env_file=None).web_processes == 1  # type: ignore[call-arg]
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://u:p@db:5432/wb")
    assert Settings(_env_file=None).web_processes == 1  # type: ignore[call-arg]  # no Redis
    monkeypatch.setenv("REDIS_URL", "redis://redis:6379/0")
    assert Settings(_env_file=None).web_processes == 8  # type: ignore[call-arg]
    monkeypatch.setenv("SANDBOX_MAX_WORKERS", "3")  # each process needs a worker
    assert Settings(_env_file=None).web_processes == 3  # type: ignore[call-arg]
    monkeypatch.setenv("WEB_CONCURRENCY", "0")
    with pytest.raises(ValueError, match="1 or more"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_backend_service_is_wired_to_the_infrastructure() -> None:
    compose = _compose("docker-compose.yml")
    assert "docker-compose.infra.yml" in str(compose["include"])
    backend = _backend()
    assert backend["build"] == {"context": ".", "dockerfile": "backend/Dockerfile"}
    assert backend["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
        "minio-init": {"condition": "service_completed_successfully"},
        "sandbox": {"condition": "service_healthy"},
    }
    assert backend["env_file"] == [{"path": ".env", "required": False}]
    assert "/readyz" in str(backend["healthcheck"]["test"])
    assert backend["restart"] == "unless-stopped"
    assert any(str(volume).endswith(":/data") for volume in backend["volumes"])


def test_dockerfile_installs_from_the_lock_file() -> None:
    dockerfile = (ROOT / "backend" / "Dockerfile").read_text()
    assert "uv sync --frozen --no-dev" in dockerfile
    # The lock file is copied, and dependencies installed, before the code.
    assert (
        dockerfile.index("backend/uv.lock")
        < dockerfile.index("uv sync")
        < dockerfile.index("COPY backend/ ")
    )
    assert "bubblewrap" in dockerfile
    assert "FROM node:" in dockerfile and "npm run build" in dockerfile
    users = re.findall(r"^USER\s+(\S+)", dockerfile, flags=re.MULTILINE)
    assert users and users[-1] not in ("root", "0"), "the image must not run as root"
    assert re.search(r"^EXPOSE 8000$", dockerfile, flags=re.MULTILINE)
    # The system-call filter is compiled with libseccomp.
    assert "libseccomp2" in dockerfile


def test_dockerfile_makes_the_volume_folders_for_its_user() -> None:
    """New named volumes copy the owner of the folder they are mounted on, from the image."""
    dockerfile = (ROOT / "backend" / "Dockerfile").read_text()
    uid, _, gid = _dockerfile_user().partition(":")
    assert re.search(rf"useradd\b[^\n]*--uid {uid}\b", dockerfile)
    assert re.search(rf"groupadd\b[^\n]*--gid {gid}\b", dockerfile)
    mounted = {target for service in (_backend(), _sandbox()) for target in _volumes(service)}
    assert mounted == {"/data", "/data/workspaces", SANDBOX_WORKSPACES, "/run/workbench-sandbox"}
    chown = re.search(r"chown workbench:workbench ([^\n\\&]+)", dockerfile)
    assert chown, "the Dockerfile must chown the volume folders to its user"
    assert mounted <= set(chown[1].split()), f"not owned by the image's user: {mounted}"


def test_dockerignore_keeps_local_state_out() -> None:
    patterns = set((ROOT / ".dockerignore").read_text().split())
    for pattern in (".git", "backend/.venv", "frontend/node_modules", "**/__pycache__", "data/"):
        assert pattern in patterns, f".dockerignore lacks {pattern}"
    assert "**/.env" in patterns, "secrets in .env must not reach the image"


def test_sandbox_service_runs_the_backends_image_as_its_user() -> None:
    sandbox, backend = _sandbox(), _backend()
    assert sandbox["build"] == backend["build"], "the sandbox service runs the backend's image"
    # Same uid: the workspaces are written by both, the socket is open to owner and group.
    assert sandbox["user"] == backend["user"] == _dockerfile_user()
    assert sandbox["command"] == [
        "python",
        "-m",
        "app.sandbox.service",
        "--socket",
        SANDBOX_SOCKET,
        "--workspaces",
        SANDBOX_WORKSPACES,
    ]
    assert sandbox["restart"] == "unless-stopped"
    assert sandbox["init"] is True
    health = "\n".join(sandbox["healthcheck"]["test"])
    assert SANDBOX_SOCKET in health and '"status"' in health


def test_sandbox_service_holds_no_secret() -> None:
    sandbox = _sandbox()
    assert "env_file" not in sandbox, "the sandbox service must not read .env (secrets)"
    environment = sandbox["environment"]
    assert isinstance(environment, dict), "write the sandbox's environment as a mapping"
    assert set(environment) <= SANDBOX_ENVIRONMENT, (
        f"unexpected variables in the sandbox service: {set(environment) - SANDBOX_ENVIRONMENT}"
    )
    for name, value in environment.items():
        assert not _SECRET_LOOKING.search(name), f"{name} looks like a secret"
        referenced = re.findall(r"\$\{(\w+)", str(value or ""))
        assert not any(_SECRET_LOOKING.search(ref) for ref in referenced), (name, value)
    assert _defaults(environment["SANDBOX_ISOLATION"]) in {m.value for m in SandboxIsolation}
    assert environment["SANDBOX_BWRAP"] is None  # passed only when set
    cache = PurePosixPath(environment["WORKBENCH_SANDBOX_CACHE"])
    assert any(cache.is_relative_to(PurePosixPath(t.split(":")[0])) for t in sandbox["tmpfs"]), (
        "the runtime cache must be on a tmpfs: the root file system is read-only"
    )


def test_sandbox_service_is_confined() -> None:
    sandbox = _sandbox()
    assert sandbox["network_mode"] == "none", "analysis code must have no network"
    assert "networks" not in sandbox and "ports" not in sandbox and "expose" not in sandbox
    assert sandbox["read_only"] is True
    assert sandbox["cap_drop"] == ["ALL"]
    for forbidden in ("cap_add", "privileged", "devices", "pid", "ipc", "userns_mode"):
        assert forbidden not in sandbox, f"the sandbox service must not set {forbidden}"
    tmp = [entry for entry in sandbox["tmpfs"] if entry.split(":")[0] == "/tmp"]
    assert tmp and "size=" in tmp[0], "a size-limited /tmp"
    # Workers: at most 64 tasks each (their own limit), bubblewrap's monitor, two relay
    # threads in the service; some for the service itself.
    workers = int(_defaults(sandbox["environment"]["SANDBOX_SERVICE_MAX_WORKERS"]))
    assert isinstance(sandbox["pids_limit"], int)
    assert sandbox["pids_limit"] >= workers * (SandboxLimits().max_processes + 3) + 100
    memory = _defaults(sandbox["mem_limit"])
    assert re.fullmatch(r"\d+[kmg]", memory), memory
    assert _defaults(sandbox["memswap_limit"]) == memory, "no swap beyond the memory limit"

    assert _option(sandbox, "no-new-privileges") == ["true"]
    assert _option(sandbox, "seccomp") == ["./deploy/sandbox-seccomp.json"]
    assert (ROOT / "deploy" / "sandbox-seccomp.json").is_file()
    # Docker's AppArmor profile denies mount: unconfined by default, or the shipped profile.
    assert _option(sandbox, "apparmor") == ["unconfined"]
    shipped = (DEPLOY / "apparmor" / "workbench-sandbox").read_text()
    variable = re.search(r"apparmor=\$\{(\w+):-unconfined\}", str(sandbox["security_opt"]))
    assert variable and f"{variable[1]}=workbench-sandbox" in shipped
    # bubblewrap mounts a fresh /proc, which the kernel refuses while Docker masks parts of it.
    assert _option(sandbox, "systempaths") == ["unconfined"]
    assert not {"unconfined", "builtin"} & set(_option(sandbox, "seccomp"))
    assert not _option(sandbox, "label"), "keep SELinux labels as they are"


def test_only_the_workspaces_and_the_socket_are_shared() -> None:
    backend, sandbox = _volumes(_backend()), _volumes(_sandbox())
    environment = _backend_environment()
    data_dir = PurePosixPath(str(environment["DATA_DIR"]))
    session = uuid.uuid4()

    # The backend keeps a session's workspace at DATA_DIR/workspaces/<id>; the sandbox sees
    # that folder at /workspaces/<id>, through the same volume.
    workspaces = PurePosixPath(workspace_dir(Path(data_dir), session)).parent
    assert backend[str(workspaces)] == sandbox[SANDBOX_WORKSPACES]
    socket_dir = str(PurePosixPath(SANDBOX_SOCKET).parent)
    assert backend[socket_dir] == sandbox[socket_dir]
    assert environment["SANDBOX_SERVICE_SOCKET"] == SANDBOX_SOCKET
    assert set(sandbox) == {SANDBOX_WORKSPACES, socket_dir}, "the sandbox sees nothing else"

    # Named volumes, not folders of the host; the new ones are declared.
    declared = set(_compose("docker-compose.yml")["volumes"])
    assert set(sandbox.values()) <= declared
    assert not any(source.startswith((".", "/", "~")) for source in sandbox.values())
    # /data itself (database files, manifests, the generated signing key) stays private.
    assert backend["/data"] not in sandbox.values()
    private = [manifest_path(Path(data_dir), session), Path(data_dir) / ".secret_key"]
    for path in private:
        assert not PurePosixPath(path).is_relative_to(workspaces), path
    for target, source in backend.items():
        if source in sandbox.values():
            assert not any(PurePosixPath(path).is_relative_to(target) for path in private)


def test_sandbox_seccomp_profile_is_dockers_default_plus_bubblewrap() -> None:
    default_bytes = (DEPLOY / "seccomp" / "docker-default.json").read_bytes()
    assert hashlib.sha256(default_bytes).hexdigest() == DOCKER_DEFAULT_SECCOMP_SHA256
    default = json.loads(default_bytes)
    profile = json.loads((DEPLOY / "sandbox-seccomp.json").read_text())

    assert profile["defaultAction"] == default["defaultAction"] == "SCMP_ACT_ERRNO"
    assert {k: v for k, v in profile.items() if k != "syscalls"} == {
        k: v for k, v in default.items() if k != "syscalls"
    }
    count = len(default["syscalls"])
    assert profile["syscalls"][:count] == default["syscalls"], "Docker's rules, unchanged"
    added = profile["syscalls"][count:]
    assert all(rule["comment"].startswith("workbench sandbox:") for rule in added)
    assert [{k: v for k, v in rule.items() if k != "comment"} for rule in added] == (
        SECCOMP_ADDITIONS
    )


def test_apparmor_profiles_grant_what_bubblewrap_needs() -> None:
    sandbox = (DEPLOY / "apparmor" / "workbench-sandbox").read_text()
    rules = {line.strip() for line in sandbox.splitlines()}
    assert "profile workbench-sandbox flags=(attach_disconnected,mediate_deleted) {" in rules
    assert {"abi <abi/4.0>,", "userns,", "mount,", "umount,", "pivot_root,", "unix,"} <= rules
    assert "deny mount," not in rules
    assert "deny @{PROC}/kcore rwklx," in rules

    bwrap = (DEPLOY / "apparmor" / "workbench-bwrap").read_text()
    assert 'profile workbench-bwrap "@BWRAP@" flags=(unconfined) {' in bwrap
    assert "  userns,\n" in bwrap


def test_the_sandbox_page_explains_isolation() -> None:
    """The sandbox's error messages send operators to docs/sandbox.md."""
    section = (ROOT / "docs" / "sandbox.md").read_text()
    assert re.search(r"^# Sandbox isolation$", section, flags=re.MULTILINE)
    for needle in (
        "kernel.apparmor_restrict_unprivileged_userns",
        "kernel.unprivileged_userns_clone",
        "user.max_user_namespaces",
        "deploy/apparmor/workbench-bwrap",
        "deploy/apparmor/workbench-sandbox",
        "SANDBOX_APPARMOR_PROFILE",
        "systempaths=unconfined",
        "sandbox_unavailable",
        "SANDBOX_ISOLATION=none",
    ):
        assert needle in section, f"docs/sandbox.md does not mention {needle}"


def _cited(document: Path) -> list[str]:
    """The files a Markdown document links to, as paths relative to the repository."""
    links = re.findall(r"\]\(((?!https?:|#|mailto:)[^)\s]+)\)", document.read_text())
    return [
        (document.parent / link.split("#")[0]).resolve().relative_to(ROOT).as_posix()
        for link in links
    ]


def test_the_documents_the_readme_cites_are_in_the_repository() -> None:
    readme = ROOT / "README.md"
    cited = _cited(readme)
    assert "docs/API.md" in cited and "docs/DESIGN.md" in cited
    assert "docs/configuration.md" in cited and "docs/sandbox.md" in cited
    for document in [readme, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in _cited(document):
            assert (ROOT / target).exists(), f"{document.name} cites {target}, which is missing"
    assert "../shared" not in readme.read_text()

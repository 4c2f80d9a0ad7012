"""The deployment files stay in step with the settings and with each other.

Docker does not run in CI, so these tests read the files: .env.example and the backend
service of docker-compose.yml must name every field of Settings, the compose defaults must
make valid settings, and the infrastructure and the image must have what the brief asks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.config import Settings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = sorted(Settings.model_fields)
PROVIDER_KEYS = ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
INFRA_SERVICES = ("postgres", "redis", "minio", "minio-init")

# ${NAME}, ${NAME-default} or ${NAME:-default} whose default holds no further ${...}.
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^${}]*))?\}")


def _compose(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / name).read_text())
    assert isinstance(loaded, dict), f"{name} is not a YAML mapping"
    return loaded


def _defaults(value: str) -> str:
    """Interpolate like docker compose does with no variable set: every default applies."""
    while (resolved := _VARIABLE.sub(lambda m: m[2] or "", value)) != value:
        value = resolved
    assert "${" not in value, f"cannot interpolate {value!r}"
    return value


def _backend() -> dict[str, Any]:
    return _compose("docker-compose.yml")["services"]["backend"]


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


def test_compose_files_parse() -> None:
    for name in ("docker-compose.infra.yml", "docker-compose.yml"):
        assert isinstance(_compose(name).get("services"), dict), f"{name} has no services"


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


def test_backend_service_is_wired_to_the_infrastructure() -> None:
    compose = _compose("docker-compose.yml")
    assert "docker-compose.infra.yml" in str(compose["include"])
    backend = _backend()
    assert backend["build"] == {"context": ".", "dockerfile": "backend/Dockerfile"}
    assert backend["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
        "minio-init": {"condition": "service_completed_successfully"},
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


def test_dockerignore_keeps_local_state_out() -> None:
    patterns = set((ROOT / ".dockerignore").read_text().split())
    for pattern in (".git", "backend/.venv", "frontend/node_modules", "**/__pycache__", "data/"):
        assert pattern in patterns, f".dockerignore lacks {pattern}"
    assert "**/.env" in patterns, "secrets in .env must not reach the image"

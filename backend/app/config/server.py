"""Server settings: the environment, where the server listens and is reached, local state
and logging.
"""

from __future__ import annotations

import ipaddress
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import NoDecode

from app.config.sections import Section, doc


class Environment(StrEnum):
    development = "development"
    production = "production"
    test = "test"


class ServerSettings(BaseModel):
    """Section "Server": the environment, the address it listens on and is reached at."""

    ENVIRONMENT: Environment = Field(
        Environment.development,
        description="`development`, `production` or `test`. `production` refuses missing or "
        "well-known secrets (`SECRET_KEY`, `ADMIN_PASSWORD`, `S3_SECRET_KEY`); set it before "
        "exposing the workbench to others. `test` is for test suites only: it also hashes "
        "passwords at argon2's lowest cost.",
        json_schema_extra=doc(Section.server),
    )
    HOST: str = Field(
        "127.0.0.1",
        description="Address the server listens on.",
        json_schema_extra=doc(Section.server, compose="always `0.0.0.0`"),
    )
    PORT: int = Field(
        8000,
        ge=1,
        le=65535,
        description="Port the server listens on (docker compose publishes it as `WORKBENCH_PORT`).",
        json_schema_extra=doc(Section.server, compose="always `8000` in the container"),
    )
    PUBLIC_URL: str | None = Field(
        None,
        description="The address people reach the workbench at (e.g. "
        "`https://workbench.example.com`, behind a proxy or in docker compose), written into "
        "exported notebooks so they fetch files from here (never taken from a request's Host "
        "header, which a client chooses) and into shared links (unset, a link takes the "
        "address its maker's request came to).",
        examples=["https://workbench.example.com"],
        json_schema_extra=doc(
            Section.server,
            unset="`http://HOST:PORT`",
            compose="`http://127.0.0.1:WORKBENCH_PORT`",
        ),
    )
    TRUSTED_PROXIES: Annotated[list[str], NoDecode] = Field(
        [],
        description="Comma-separated addresses or networks (CIDR) of the proxies in front of "
        "the workbench. Only a request that comes from one of them has its client's address "
        "taken from `X-Forwarded-For` (the right-most address of the chain that is not one "
        "of them) and its scheme from `X-Forwarded-Proto`; every other request is counted "
        "at the address it comes from, whatever it forwards, so that nobody escapes the "
        "login and shared-link limits by writing the header. Empty: no proxy, no forwarded "
        "header is believed (`docker-compose.scale.yml`, whose backends only its nginx "
        "reaches, names the private networks; so does Kubernetes' ingress-nginx component).",
        examples=["10.0.0.0/8,172.16.0.0/12", "127.0.0.1"],
        json_schema_extra=doc(Section.server),
    )
    DATA_DIR: Path = Field(
        Path("./data"),
        description="Directory for local state: the SQLite database, uploaded files and "
        "artifacts when S3 is not set, the sessions' workspaces, caches and the generated "
        "signing key. Relative to `backend/` with `make run`.",
        json_schema_extra=doc(Section.server, compose="always `/data`, a named volume"),
    )
    WEB_CONCURRENCY: int | Literal["auto"] = Field(
        1,
        description="Backend processes serving `PORT` (uvicorn workers), so that one host's "
        "backend uses every core: a number, or `auto` for the CPUs this process may run on. "
        "Each process has its own database pools (`DATABASE_POOL_SIZE` each), metrics and "
        "sandbox pool: `SANDBOX_MAX_WORKERS` (or its default) is shared out between them, "
        "each taking its share, and there are never more processes than it. The embedded "
        "setup (SQLite, or no `REDIS_URL`) always runs one process: its locks and live events "
        "live in it.",
        examples=["auto", "4"],
        json_schema_extra=doc(Section.server, compose="`auto`, as the image sets it"),
    )
    LIVE_STREAMS_PER_USER: int = Field(
        20,
        ge=1,
        le=1000,
        description="Live streams (`GET /sessions/{id}/live`: one per session open in a "
        "browser tab) one user may hold open on one backend process; one more answers 503 "
        "with Retry-After.",
        json_schema_extra=doc(Section.server),
    )
    LIVE_STREAMS_PER_PROCESS: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Live streams one backend process holds open at most, all users together "
        "(each waits on one Redis connection in the team setup); one more answers 503 with "
        "Retry-After.",
        json_schema_extra=doc(Section.server),
    )
    LOG_LEVEL: str = Field(
        "info",
        description="Log level: `debug`, `info`, `warning` or `error`.",
        json_schema_extra=doc(Section.server),
    )

    @field_validator("TRUSTED_PROXIES", mode="before")
    @classmethod
    def _trusted_proxies(cls, value: object) -> object:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list):
            return value
        networks = []
        for item in (str(part).strip() for part in items):
            if not item:
                continue
            try:
                networks.append(str(ipaddress.ip_network(item, strict=False)))
            except ValueError:
                raise ValueError(
                    f"{item!r} is not an IP address or network (such as 10.0.0.0/8)"
                ) from None
        return networks

    @field_validator("WEB_CONCURRENCY")
    @classmethod
    def _web_concurrency(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError("must be 1 or more, or auto")
        return value

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

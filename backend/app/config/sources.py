"""Data source settings: which servers and files a project's sources may reach, how long a
connection may take, how much of a schema is kept, and the earlier secret keys that can
still decrypt stored passwords.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import NoDecode

from app.config.sections import Section, doc


def _comma_list(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class SourcesSettings(BaseModel):
    """Section "Data sources": where sources may connect, time and size bounds, key rotation."""

    SOURCES_ALLOWED_HOSTS: Annotated[list[str], NoDecode] = Field(
        ["*"],
        description="Comma-separated servers a data source may connect to: host names, IP "
        "addresses or CIDR ranges, each with an optional `:port` (`db.internal`, "
        "`10.0.0.0/8`, `[::1]:5432`); `*` is any. Whatever this says, the workbench's own "
        "database, Redis and object store, and link-local or cloud-metadata addresses "
        "(169.254.0.0/16, fe80::/10, …) are refused unless an entry other than `*` names them.",
        examples=["db.internal:5432,10.1.0.0/16"],
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_FILE_DIRS: Annotated[list[Path], NoDecode] = Field(
        [],
        description="Comma-separated directories on the server that SQLite and DuckDB sources "
        "may read files from (after resolving `..` and symbolic links, a file must lie inside "
        "one). The workbench's own database and secret key are refused even there.",
        examples=["/srv/data,/mnt/exports"],
        json_schema_extra=doc(Section.sources, unset="no file sources (SQLite and DuckDB)"),
    )
    SOURCES_CONNECT_TIMEOUT_SECONDS: float = Field(
        10,
        gt=0,
        le=120,
        description="The longest connecting to a source (and checking it) may take before "
        "it fails with a sentence saying why. A check where no database answered (a closed "
        "port, a silent one, another protocol, an unknown host) answers when this is up.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_SCHEMA_MAX_TABLES: int = Field(
        2000,
        ge=1,
        description="Tables (and views) of a source's schema kept for the browser and the "
        "agent; a larger schema is cut there and marked truncated.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_SCHEMA_MAX_COLUMNS: int = Field(
        50_000,
        ge=1,
        description="Columns, over all tables of a source's schema, kept (as above).",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_QUERY_TIMEOUT_SECONDS: float = Field(
        30,
        gt=0,
        le=3600,
        description="The longest one query of the agent's (`sql()`) may run in the database; "
        "past it the database stops it and the agent is told to aggregate or filter more. "
        "A step's own time limit (`SANDBOX_STEP_TIMEOUT_SECONDS`) bounds it too.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_MAX_ROWS: int = Field(
        1_000_000,
        ge=1,
        description="Rows one query may return as a DataFrame; past it the query stops and the "
        "agent is told to aggregate in SQL, add LIMIT, or write the result to a file "
        '(`sql(…, into="x.parquet")`, bounded by the workspace\'s disk quota instead).',
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_MAX_RESULT_MB: int = Field(
        256,
        ge=1,
        description="Megabytes (as Arrow data) one query may return as a DataFrame, as above.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_QUERIES_PER_RUN: int = Field(
        50,
        ge=1,
        description="Queries one question's code may run on data sources in all (counted across "
        "the user's answers to `ask_user`, on any replica); past it each `sql()` call fails "
        "with a sentence saying so.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_CHECKS_PER_MINUTE: int = Field(
        20,
        ge=1,
        description="Checks of sources one user may ask for per minute (`POST "
        "/sources/{id}/check`, and changes of a URL or password, which check again); past it "
        "they answer 429 with `Retry-After`. Counted in Redis across replicas when it is set.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_CREATIONS_PER_MINUTE: int = Field(
        20,
        ge=1,
        description="Sources one user may add per minute (each is checked as it is added), "
        "counted as above.",
        json_schema_extra=doc(Section.sources),
    )
    SOURCES_PREVIOUS_SECRET_KEYS: str | None = Field(
        None,
        description="Comma-separated earlier values of `SECRET_KEY` that can still decrypt "
        "stored source passwords after the key changed; `workbench admin reencrypt-sources` "
        "then encrypts every one with the current key, after which they can be removed.",
        json_schema_extra=doc(Section.sources, unset="only the current key decrypts", secret=True),
    )

    @field_validator("SOURCES_ALLOWED_HOSTS", "SOURCES_FILE_DIRS", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _comma_list(value)

    @property
    def previous_secret_keys(self) -> list[str]:
        """The earlier secret keys, in the order given."""
        keys = (self.SOURCES_PREVIOUS_SECRET_KEYS or "").split(",")
        return [key.strip() for key in keys if key.strip()]

"""The API's shapes of sources, their checks and their schema (see API.md, "Data sources")."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas import Schema

NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]*$"


class SourceCreate(BaseModel):
    name: str = Field(
        min_length=1,
        max_length=64,
        pattern=NAME_PATTERN,
        description="What the agent calls it: sql(…, source=name). Letters, digits, _ and -.",
    )
    url: str = Field(
        min_length=1,
        max_length=4000,
        description="postgresql://user:password@host:5432/db, mysql://…, sqlite:////path or "
        "duckdb:////path (files on the server).",
    )
    password: str | None = Field(
        None,
        max_length=1000,
        description="The password, if not in the URL (it wins over the URL's).",
    )
    description: str = Field("", max_length=10_000)


class SourceUpdate(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=64, pattern=NAME_PATTERN)
    url: str | None = Field(
        None,
        min_length=1,
        max_length=4000,
        description="A new URL; without a password in it (or `password`), the stored one is kept.",
    )
    password: str | None = Field(None, max_length=1000)
    description: str | None = Field(None, max_length=10_000)


class SourceOut(Schema):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    kind: str
    display_url: str = Field(description="The URL with its password masked as ***.")
    description: str
    status: str = Field(
        description="unchecked, ready, refused (role or host not allowed) or failed."
    )
    status_detail: str = Field(description="The last check's sentence.")
    access: str | None = Field(
        description="How queries are kept read-only: read_only_role, read_only_transaction "
        "(the role can write; every query runs in a read-only transaction) or read_only_file."
    )
    server_version: str | None
    table_count: int | None
    schema_truncated: bool
    checked_at: datetime | None
    created_at: datetime
    updated_at: datetime


class CheckOut(BaseModel):
    ok: bool
    detail: str
    server_version: str | None
    table_count: int | None
    status: str
    access: str | None


_FROM = (
    "Where `description` comes from: team (the data dictionary), database (the database's "
    "own COMMENT, shown until the team writes one), or null (none)."
)


class ColumnOut(BaseModel):
    name: str
    type: str
    nullable: bool
    description: str
    description_source: Literal["team", "database"] | None = Field(None, description=_FROM)


class TableOut(BaseModel):
    schema_: str = Field(alias="schema", serialization_alias="schema")
    name: str
    description: str
    description_source: Literal["team", "database"] | None = Field(None, description=_FROM)
    row_estimate: int | None = Field(
        description="The catalog's estimate of its rows; null where the database keeps none "
        "(a table never analysed, a view)."
    )
    columns: list[ColumnOut]


class SchemaOut(BaseModel):
    tables: list[TableOut]
    truncated: bool = Field(description="The cached schema stops short of the whole database.")
    checked_at: datetime | None


class ColumnDescription(BaseModel):
    name: str = Field(min_length=1, max_length=255)
    description: str = Field(max_length=10_000)


class TableDescription(BaseModel):
    schema_: str | None = Field(None, alias="schema", max_length=255)
    name: str = Field(min_length=1, max_length=255)
    description: str | None = Field(None, max_length=10_000)
    columns: list[ColumnDescription] = Field(default_factory=list, max_length=5000)


class SchemaPatch(BaseModel):
    tables: list[TableDescription] = Field(max_length=5000)


class SampleColumn(BaseModel):
    name: str
    type: str = Field(description="The column's type as the rows arrived (Arrow's name).")


class SampleOut(BaseModel):
    schema_: str = Field(alias="schema", serialization_alias="schema")
    table: str
    columns: list[SampleColumn]
    rows: list[list[Any]] = Field(
        description="At most `limit` rows in the table's column order; dates and times as "
        "ISO text, long texts cut at 500 characters, binary values summarised."
    )
    limit: int

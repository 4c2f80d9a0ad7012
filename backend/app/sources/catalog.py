"""What a source holds, as plain data with no secret in it: what introspection found (its
tables, their columns and row estimates), and the catalog the agent's prompt is written from."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    nullable: bool
    description: str = ""


@dataclass(frozen=True)
class TableInfo:
    schema: str
    name: str
    row_estimate: int | None
    columns: list[ColumnInfo] = field(default_factory=list)
    description: str = ""


@dataclass(frozen=True)
class Introspection:
    """A source's tables as a check listed them; `truncated` when the caps cut the list."""

    tables: list[TableInfo]
    table_count: int
    truncated: bool


@dataclass(frozen=True)
class SourceCatalog:
    """One source as the agent's prompt describes it.

    Attributes:
        name: What the agent passes as `source=`.
        kind: postgresql, mysql, sqlite or duckdb (its SQL dialect).
        description: The team's description of the source (untrusted text).
        access: How read-only is guaranteed (read_only_role, read_only_transaction,
            read_only_file), None while unchecked.
        status: ready, refused, failed or unchecked; only ready sources can be queried.
        tables: Its tables with their columns, types, row estimates and the team's
            descriptions (untrusted text), as the last check cached them.
        truncated: The cached list stops short of the whole schema.
    """

    name: str
    kind: str
    description: str
    access: str | None
    status: str
    tables: list[TableInfo]
    truncated: bool

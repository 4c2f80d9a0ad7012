"""What a source holds, as plain data with no secret in it: what introspection found (its
tables, their columns and row estimates), and the catalog the agent's prompt is written from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# Where a description comes from: the team's data dictionary, or the database's own
# COMMENT (read from its catalog at each check), which stands until the team writes one.
DescriptionSource = Literal["team", "database"]


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    nullable: bool
    description: str = ""
    # The database's COMMENT on the column, as introspection found it.
    comment: str = ""
    description_source: DescriptionSource | None = None


@dataclass(frozen=True)
class TableInfo:
    schema: str
    name: str
    row_estimate: int | None
    columns: list[ColumnInfo] = field(default_factory=list)
    description: str = ""
    comment: str = ""
    description_source: DescriptionSource | None = None


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
        tables: Its tables with their columns, types, row estimates and descriptions (the
            team's, else the database's comments; untrusted text), as the last check cached
            them.
        truncated: The cached list stops short of the whole schema.
    """

    name: str
    kind: str
    description: str
    access: str | None
    status: str
    tables: list[TableInfo]
    truncated: bool

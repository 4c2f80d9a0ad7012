"""What the agent is told of the project's data sources (databases), within a budget.

Table and column names, types and the team's descriptions come from the databases and the
users, so they are untrusted: each is made safe (see untrusted.py) and rendered
inside the prompt's data block. A schema too big for the prompt (hundreds of tables,
thousands of columns) is summarised: the largest tables first, each with its first
columns, and a count of the rest, which the agent looks up with `tables()` and
`columns("name")` instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.agent.untrusted import untrusted

NAME_CHARS = 120
TYPE_CHARS = 40
DESCRIPTION_CHARS = 200
# The budget of the whole prompt's schema: columns described in all, tables listed per
# source, columns per table.
MAX_COLUMNS_IN_ALL = 400
MAX_TABLES = 40
MAX_TABLE_COLUMNS = 40


@dataclass(frozen=True)
class SourceColumn:
    name: str
    type: str
    description: str = ""


@dataclass(frozen=True)
class SourceTable:
    name: str  # as the SQL names it (schema-qualified where the source has schemas)
    row_estimate: int | None = None
    description: str = ""
    columns: list[SourceColumn] = field(default_factory=list)
    more_columns: int = 0


@dataclass(frozen=True)
class SourceInfo:
    """One data source as the prompt shows it."""

    name: str
    kind: str  # postgresql, mysql, sqlite, duckdb: the SQL dialect
    description: str = ""
    tables: list[SourceTable] = field(default_factory=list)
    more_tables: int = 0
    truncated: bool = False  # the schema was cut when it was read: there is more


def fit(sources: list[SourceInfo]) -> list[SourceInfo]:
    """The sources made safe and cut to the prompt's budget."""
    shown: list[SourceInfo] = []
    left = MAX_COLUMNS_IN_ALL
    for source in sources:
        # The biggest tables are the likeliest to matter; unknown sizes come last.
        ranked = sorted(source.tables, key=lambda t: -(t.row_estimate or -1))
        tables: list[SourceTable] = []
        for table in ranked[:MAX_TABLES]:
            room = max(0, min(MAX_TABLE_COLUMNS, left))
            if room == 0 and tables:
                break
            columns = [_safe_column(c) for c in table.columns[:room]]
            left -= len(columns)
            tables.append(
                SourceTable(
                    name=untrusted(table.name, NAME_CHARS),
                    row_estimate=table.row_estimate,
                    description=untrusted(table.description, DESCRIPTION_CHARS),
                    columns=columns,
                    more_columns=table.more_columns + len(table.columns) - len(columns),
                )
            )
        shown.append(
            SourceInfo(
                name=untrusted(source.name, NAME_CHARS),
                kind=untrusted(source.kind, TYPE_CHARS),
                description=untrusted(source.description, DESCRIPTION_CHARS),
                tables=tables,
                more_tables=source.more_tables + len(source.tables) - len(tables),
                truncated=source.truncated,
            )
        )
    return shown


def _safe_column(column: SourceColumn) -> SourceColumn:
    return SourceColumn(
        untrusted(column.name, NAME_CHARS),
        untrusted(column.type, TYPE_CHARS),
        untrusted(column.description, DESCRIPTION_CHARS),
    )

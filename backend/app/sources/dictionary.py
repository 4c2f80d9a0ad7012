"""A source's schema as the last check cached it, merged with the team's descriptions of
its tables and columns (the data dictionary), which live apart so that no check loses one."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BadRequest, NotFound
from app.models import DataSource, SourceDescription, SourceTable
from app.sources.catalog import ColumnInfo, Introspection, TableInfo
from app.sources.schemas import SchemaPatch, TableDescription

# The key of a description: (schema, table, column or "" for the table itself).
Key = tuple[str, str, str]


async def replace_tables(db: AsyncSession, source: DataSource, found: Introspection) -> None:
    """Cache what a check found in place of what the one before found."""
    await db.execute(delete(SourceTable).where(SourceTable.source_id == source.id))
    db.add_all(
        SourceTable(
            source_id=source.id,
            position=position,
            schema_name=table.schema,
            name=table.name,
            row_estimate=table.row_estimate,
            columns=[
                {"name": c.name, "type": c.type, "nullable": c.nullable} for c in table.columns
            ],
        )
        for position, table in enumerate(found.tables)
    )
    source.schema_truncated = found.truncated
    await db.flush()


async def _cached(db: AsyncSession, source: DataSource) -> list[SourceTable]:
    query = select(SourceTable).where(SourceTable.source_id == source.id)
    return list(await db.scalars(query.order_by(SourceTable.position)))


async def _descriptions(db: AsyncSession, source: DataSource) -> dict[Key, SourceDescription]:
    rows = await db.scalars(
        select(SourceDescription).where(SourceDescription.source_id == source.id)
    )
    return {(r.schema_name, r.table_name, r.column_name): r for r in rows}


async def tables_of(db: AsyncSession, source: DataSource) -> list[TableInfo]:
    """The cached tables with the team's descriptions of them and their columns."""
    said = {key: row.description for key, row in (await _descriptions(db, source)).items()}
    return [
        TableInfo(
            schema=t.schema_name,
            name=t.name,
            row_estimate=t.row_estimate,
            description=said.get((t.schema_name, t.name, ""), ""),
            columns=[
                ColumnInfo(
                    name=c["name"],
                    type=c["type"],
                    nullable=c["nullable"],
                    description=said.get((t.schema_name, t.name, c["name"]), ""),
                )
                for c in t.columns
            ],
        )
        for t in await _cached(db, source)
    ]


def _find(tables: Sequence[SourceTable], wanted: TableDescription) -> SourceTable:
    matches = [
        t for t in tables if t.name == wanted.name and wanted.schema_ in (None, t.schema_name)
    ]
    if not matches:
        where = f"{wanted.schema_}.{wanted.name}" if wanted.schema_ else wanted.name
        raise NotFound(
            f"The source has no table {where} (as its last check listed them; check it again "
            "if the table is new).",
            code="table_not_found",
        )
    if len(matches) > 1:
        schemas = ", ".join(sorted(t.schema_name for t in matches))
        raise BadRequest(
            f"Tables named {wanted.name} are in several schemas ({schemas}): give `schema`.",
            code="ambiguous_table",
        )
    return matches[0]


async def describe(db: AsyncSession, source: DataSource, patch: SchemaPatch) -> None:
    """Set the descriptions `patch` gives (an empty one removes a description).

    Raises:
        NotFound: a table or column the cached schema does not have (nothing is changed).
        BadRequest: a table name found in several schemas without `schema`.
    """
    tables = await _cached(db, source)
    changes: dict[Key, str] = {}
    for wanted in patch.tables:
        table = _find(tables, wanted)
        if wanted.description is not None:
            changes[(table.schema_name, table.name, "")] = wanted.description.strip()
        names = {c["name"] for c in table.columns}
        for column in wanted.columns:
            if column.name not in names:
                raise NotFound(
                    f"The table {table.name} has no column {column.name}.", code="column_not_found"
                )
            changes[(table.schema_name, table.name, column.name)] = column.description.strip()
    existing = await _descriptions(db, source)
    for key, text in changes.items():
        row = existing.get(key)
        if not text:
            if row is not None:
                await db.delete(row)
        elif row is None:
            db.add(
                SourceDescription(
                    source_id=source.id,
                    schema_name=key[0],
                    table_name=key[1],
                    column_name=key[2],
                    description=text,
                )
            )
        else:
            row.description = text
    await db.flush()

"""What a knowledge item applies to: checking a new `applies_to` against the project (its
files, its sources and their cached tables), and saying of stored items whose file, source
or table is gone that it is gone. Every statement about targets lives here."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Unprocessable
from app.knowledge.schemas import AppliesTo
from app.models import DataSource, File, KnowledgeItem, Project, SourceTable


def _refused(sentence: str) -> Unprocessable:
    return Unprocessable(sentence, code="applies_to_not_found")


def table_names(tables: Sequence[SourceTable]) -> dict[str, SourceTable]:
    """A source's cached tables by the names its data dictionary gives them, "schema.table"
    (and by the bare name where only one schema has it)."""
    named = {f"{t.schema_name}.{t.name}": t for t in tables}
    bare: dict[str, list[SourceTable]] = {}
    for t in tables:
        bare.setdefault(t.name, []).append(t)
    for name, found in bare.items():
        if len(found) == 1 and name not in named:
            named[name] = found[0]
    return named


async def cached_tables(db: AsyncSession, source_id: uuid.UUID) -> list[SourceTable]:
    return list(await db.scalars(select(SourceTable).where(SourceTable.source_id == source_id)))


async def checked(db: AsyncSession, project: Project, target: AppliesTo) -> AppliesTo:
    """`target` as it will be stored (a source's table by its "schema.table" name).

    Raises:
        Unprocessable: a file or source not of this project, a table the source's last
            check did not list, a column its table has not, a column without a table.
    """
    if target.file_id is not None and target.source_id is not None:
        raise Unprocessable(
            "An item applies to a file or to a source, not both.", code="applies_to_invalid"
        )
    if target.column and not target.table:
        raise Unprocessable(
            "A column is named within its table: give `table` too.", code="applies_to_invalid"
        )
    if target.table and target.file_id is None and target.source_id is None:
        raise Unprocessable(
            "A table belongs to a file or a source: give `file_id` or `source_id` too.",
            code="applies_to_invalid",
        )
    if target.file_id is not None:
        found = await db.scalar(
            select(File.id).where(File.id == target.file_id, File.project_id == project.id)
        )
        if found is None:
            raise _refused("This project has no such file.")
    if target.source_id is None:
        return target
    source = await db.scalar(
        select(DataSource.id).where(
            DataSource.id == target.source_id, DataSource.project_id == project.id
        )
    )
    if source is None:
        raise _refused("This project has no such data source.")
    tables = await cached_tables(db, target.source_id)
    if not target.table or not tables:
        return target  # a source not checked yet: its tables are taken on trust
    table = table_names(tables).get(target.table)
    if table is None:
        raise _refused(
            f"The source has no table {target.table} (as its last check listed them; name "
            "it as schema.table, or check the source again if the table is new)."
        )
    if target.column and target.column not in {c["name"] for c in table.columns}:
        raise _refused(f"The table {target.table} has no column {target.column}.")
    return target.model_copy(update={"table": f"{table.schema_name}.{table.name}"})


async def missing(db: AsyncSession, items: Sequence[KnowledgeItem]) -> dict[uuid.UUID, str]:
    """A sentence for each item whose file, source or source's table no longer exists."""
    file_ids = {i.file_id for i in items if i.file_id is not None}
    source_ids = {i.source_id for i in items if i.source_id is not None}
    files = (
        set(await db.scalars(select(File.id).where(File.id.in_(file_ids)))) if file_ids else set()
    )
    sources = (
        set(await db.scalars(select(DataSource.id).where(DataSource.id.in_(source_ids))))
        if source_ids
        else set()
    )
    tables: dict[uuid.UUID, set[str]] = {s: set() for s in sources}
    if sources:
        rows = await db.execute(
            select(SourceTable.source_id, SourceTable.schema_name, SourceTable.name).where(
                SourceTable.source_id.in_(sources)
            )
        )
        for source_id, schema, name in rows:
            tables[source_id].add(f"{schema}.{name}")
    said: dict[uuid.UUID, str] = {}
    for item in items:
        if item.file_id is not None and item.file_id not in files:
            said[item.id] = "The file it applies to was deleted."
        elif item.source_id is not None and item.source_id not in sources:
            said[item.id] = "The data source it applies to was deleted."
        elif (
            item.source_id is not None
            and item.table_name
            and tables[item.source_id]
            and item.table_name not in tables[item.source_id]
        ):
            said[item.id] = f"The source's last check no longer lists the table {item.table_name}."
    return said

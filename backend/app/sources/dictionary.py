"""A source's schema as the last check cached it, merged with the team's descriptions of
its tables and columns (the data dictionary), or else the database's own comments. The
team's descriptions are the project's approved `column` knowledge items of the source
(table "schema.table", column None for the table itself), kept apart from the cache so
that no check loses one: a description written here or through /knowledge is the same
item."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config.knowledge import KnowledgeSettings
from app.errors import BadRequest, NotFound
from app.knowledge import service as knowledge
from app.knowledge.schemas import AppliesTo
from app.models import DataSource, KnowledgeItem, Project, SourceTable, User
from app.models.knowledge import KnowledgeKind, KnowledgeStatus
from app.sources.catalog import ColumnInfo, DescriptionSource, Introspection, TableInfo
from app.sources.schemas import SchemaPatch

# The key of a description: ("schema.table", column or "" for the table itself).
Key = tuple[str, str]


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
            comment=table.comment or None,
            columns=[
                {"name": c.name, "type": c.type, "nullable": c.nullable}
                | ({"comment": c.comment} if c.comment else {})
                for c in table.columns
            ],
        )
        for position, table in enumerate(found.tables)
    )
    source.schema_truncated = found.truncated
    await db.flush()


async def _cached(db: AsyncSession, source: DataSource) -> list[SourceTable]:
    query = select(SourceTable).where(SourceTable.source_id == source.id)
    return list(await db.scalars(query.order_by(SourceTable.position)))


def _key(item: KnowledgeItem) -> Key:
    return (item.table_name or "", item.column_name or "")


async def _items(db: AsyncSession, source: DataSource) -> list[KnowledgeItem]:
    """The source's `column` items (any status), oldest change first."""
    query = select(KnowledgeItem).where(
        KnowledgeItem.source_id == source.id,
        KnowledgeItem.kind == KnowledgeKind.column,
        KnowledgeItem.table_name.is_not(None),
    )
    return list(await db.scalars(query.order_by(KnowledgeItem.updated_at, KnowledgeItem.id)))


async def _descriptions(db: AsyncSession, source: DataSource) -> dict[Key, str]:
    """The approved descriptions (the newest where several items describe one column)."""
    return {
        _key(i): i.body for i in await _items(db, source) if i.status == KnowledgeStatus.approved
    }


def _described(team: str | None, comment: str) -> tuple[str, DescriptionSource | None]:
    """The description shown and where it comes from: the team's wins over the database's
    own comment, which stands until the team writes one."""
    if team:
        return team, "team"
    return (comment, "database") if comment else ("", None)


async def tables_of(db: AsyncSession, source: DataSource) -> list[TableInfo]:
    """The cached tables with their descriptions and their columns': the team's, else the
    database's comments (read from its catalog by the last check, never copied into
    knowledge items)."""
    said = await _descriptions(db, source)
    tables = []
    for t in await _cached(db, source):
        name = f"{t.schema_name}.{t.name}"
        columns = []
        for c in t.columns:
            text, origin = _described(said.get((name, c["name"])), c.get("comment", ""))
            columns.append(
                ColumnInfo(
                    name=c["name"],
                    type=c["type"],
                    nullable=c["nullable"],
                    description=text,
                    comment=c.get("comment", ""),
                    description_source=origin,
                )
            )
        text, origin = _described(said.get((name, "")), t.comment or "")
        tables.append(
            TableInfo(
                schema=t.schema_name,
                name=t.name,
                row_estimate=t.row_estimate,
                description=text,
                comment=t.comment or "",
                description_source=origin,
                columns=columns,
            )
        )
    return tables


async def find_table(
    db: AsyncSession, source: DataSource, schema: str | None, name: str
) -> SourceTable:
    """The cached table `name` (in `schema`, where given).

    Raises:
        NotFound: the last check listed no such table (table_not_found).
        BadRequest: the name is in several schemas and `schema` is not given.
    """
    return _find(await _cached(db, source), schema, name)


def _find(tables: Sequence[SourceTable], schema: str | None, name: str) -> SourceTable:
    matches = [t for t in tables if t.name == name and schema in (None, t.schema_name)]
    if not matches:
        where = f"{schema}.{name}" if schema else name
        raise NotFound(
            f"The source has no table {where} (as its last check listed them; check it again "
            "if the table is new).",
            code="table_not_found",
        )
    if len(matches) > 1:
        schemas = ", ".join(sorted(t.schema_name for t in matches))
        raise BadRequest(
            f"Tables named {name} are in several schemas ({schemas}): give `schema`.",
            code="ambiguous_table",
        )
    return matches[0]


@dataclass
class Change:
    """A column item the data dictionary created, updated or deleted (for the audit log)."""

    what: Literal["created", "updated", "deleted"]
    item: KnowledgeItem


async def describe(
    db: AsyncSession,
    source: DataSource,
    patch: SchemaPatch,
    user: User | None = None,
    limits: KnowledgeSettings | None = None,
) -> list[Change]:
    """Set the descriptions `patch` gives (an empty one removes a description): each is the
    approved `column` item of its table or column, so the project's knowledge lists it.

    Raises:
        NotFound: a table or column the cached schema does not have (nothing is changed).
        BadRequest: a table name found in several schemas without `schema`.
        Unprocessable: a description longer than KNOWLEDGE_ITEM_MAX_CHARS.
    """
    limits = limits or KnowledgeSettings()
    tables = await _cached(db, source)
    changes: dict[Key, str] = {}
    for wanted in patch.tables:
        table = _find(tables, wanted.schema_, wanted.name)
        name = f"{table.schema_name}.{table.name}"
        if wanted.description is not None:
            changes[(name, "")] = wanted.description.strip()
        names = {c["name"] for c in table.columns}
        for column in wanted.columns:
            if column.name not in names:
                raise NotFound(
                    f"The table {table.name} has no column {column.name}.", code="column_not_found"
                )
            changes[(name, column.name)] = column.description.strip()
    for text in changes.values():
        knowledge.bounded(text, limits)
    existing: dict[Key, list[KnowledgeItem]] = {}
    for item in await _items(db, source):
        existing.setdefault(_key(item), []).append(item)
    done: list[Change] = []
    for key, text in changes.items():
        done += await _write(db, source, key, text, existing.get(key, []), user, limits)
    await db.flush()
    return done


async def _write(
    db: AsyncSession,
    source: DataSource,
    key: Key,
    text: str,
    items: list[KnowledgeItem],
    user: User | None,
    limits: KnowledgeSettings,
) -> list[Change]:
    approved = [i for i in items if i.status == KnowledgeStatus.approved]
    if not text:
        for item in approved:
            await db.delete(item)
        return [Change("deleted", i) for i in approved]
    if not items:
        project = await db.get(Project, source.project_id)
        assert project is not None
        target = AppliesTo(source_id=source.id, table=key[0], column=key[1] or None)
        title = f"{key[0]}.{key[1]}" if key[1] else key[0]
        created = await knowledge.create_approved(
            db,
            project,
            user,
            kind=KnowledgeKind.column,
            title=title[:200],
            body=text,
            applies_to=target,
            limits=limits,
        )
        return [Change("created", created)]
    item = (approved or items)[-1]
    if item.body == text and item.status == KnowledgeStatus.approved:
        return []
    knowledge.rewrite(item, text, user)
    return [Change("updated", item)]

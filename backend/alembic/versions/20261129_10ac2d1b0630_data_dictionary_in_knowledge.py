"""the data dictionary in knowledge items: every source_descriptions row becomes an
approved `column` item of its source's project (table "schema.table", column NULL for a
table's own description), then the table is dropped; downgrading moves them back

Revision ID: 10ac2d1b0630
Revises: a7b8c9d0e1f2
Create Date: 2026-11-29 05:00:00.000000
"""

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa

import app.models.base
from alembic import op

revision: str = "10ac2d1b0630"
down_revision: str | None = "a7b8c9d0e1f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app.knowledge.service estimates it, written here so the migration never changes.
CHARS_PER_TOKEN = 4

descriptions = sa.table(
    "source_descriptions",
    sa.column("id", sa.Uuid()),
    sa.column("source_id", sa.Uuid()),
    sa.column("schema_name", sa.String()),
    sa.column("table_name", sa.String()),
    sa.column("column_name", sa.String()),
    sa.column("description", sa.Text()),
    sa.column("updated_at", app.models.base.UTCDateTime(timezone=True)),
)
sources = sa.table("data_sources", sa.column("id", sa.Uuid()), sa.column("project_id", sa.Uuid()))
items = sa.table(
    "knowledge_items",
    sa.column("id", sa.Uuid()),
    sa.column("project_id", sa.Uuid()),
    sa.column("kind", sa.String()),
    sa.column("title", sa.String()),
    sa.column("body", sa.Text()),
    sa.column("status", sa.String()),
    sa.column("file_id", sa.Uuid()),
    sa.column("source_id", sa.Uuid()),
    sa.column("table_name", sa.String()),
    sa.column("column_name", sa.String()),
    sa.column("flags", sa.JSON()),
    sa.column("tokens", sa.Integer()),
    sa.column("created_at", app.models.base.UTCDateTime(timezone=True)),
    sa.column("updated_at", app.models.base.UTCDateTime(timezone=True)),
)


def _title(table: str, column: str | None) -> str:
    return (f"{table}.{column}" if column else table)[:200]


def upgrade() -> None:
    db = op.get_bind()
    rows = db.execute(
        sa.select(
            sources.c.project_id,
            descriptions.c.source_id,
            descriptions.c.schema_name,
            descriptions.c.table_name,
            descriptions.c.column_name,
            descriptions.c.description,
            descriptions.c.updated_at,
        ).join(sources, sources.c.id == descriptions.c.source_id)
    ).all()
    moved = []
    for project_id, source_id, schema, table, column, text, at in rows:
        name = f"{schema}.{table}"
        title = _title(name, column or None)
        moved.append(
            {
                "id": uuid.uuid4(),
                "project_id": project_id,
                "kind": "column",
                "title": title,
                "body": text,
                "status": "approved",
                "file_id": None,
                "source_id": source_id,
                "table_name": name,
                "column_name": column or None,
                "flags": [],
                "tokens": (len(title) + len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN,
                "created_at": at,
                "updated_at": at,
            }
        )
    if moved:
        op.bulk_insert(items, moved)
    op.drop_table("source_descriptions")


def downgrade() -> None:
    op.create_table(
        "source_descriptions",
        sa.Column("source_id", sa.Uuid(), nullable=False),
        sa.Column("schema_name", sa.String(length=255), nullable=False),
        sa.Column("table_name", sa.String(length=255), nullable=False),
        sa.Column("column_name", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("updated_at", app.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["data_sources.id"],
            name=op.f("fk_source_descriptions_source_id_data_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source_descriptions")),
        sa.UniqueConstraint(
            "source_id",
            "schema_name",
            "table_name",
            "column_name",
            name=op.f("uq_source_descriptions_source_id"),
        ),
    )
    db = op.get_bind()
    rows = db.execute(
        sa.select(
            items.c.id,
            items.c.source_id,
            items.c.table_name,
            items.c.column_name,
            items.c.body,
            items.c.updated_at,
        )
        .join(sources, sources.c.id == items.c.source_id)
        .where(
            items.c.kind == "column",
            items.c.status == "approved",
            items.c.table_name.is_not(None),
        )
        .order_by(items.c.updated_at)
    ).all()
    kept: dict[tuple[object, str, str, str], dict[str, object]] = {}
    for _item, source_id, table, column, text, at in rows:
        schema, _, name = table.partition(".")
        key = (source_id, schema, name, column or "")
        kept[key] = {  # the newest of several items for one column wins
            "id": uuid.uuid4(),
            "source_id": source_id,
            "schema_name": schema,
            "table_name": name,
            "column_name": column or "",
            "description": text,
            "updated_at": at or datetime.now(UTC),
        }
    if kept:
        op.bulk_insert(descriptions, list(kept.values()))
    moved = [r[0] for r in rows]
    if moved:
        op.execute(items.delete().where(items.c.id.in_(moved)))

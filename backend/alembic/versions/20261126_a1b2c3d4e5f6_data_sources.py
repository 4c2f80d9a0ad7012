"""data sources, their cached schema and the data dictionary

Revision ID: a1b2c3d4e5f6
Revises: f6a8b0c2d4e6
Create Date: 2026-11-26 08:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

import app.models.base
from alembic import op

revision: str = "a1b2c3d4e5f6"
down_revision: str | None = "f6a8b0c2d4e6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "data_sources",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("password_sealed", sa.Text(), nullable=True),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("status_detail", sa.Text(), nullable=False),
        sa.Column("access", sa.String(length=30), nullable=True),
        sa.Column("server_version", sa.String(length=200), nullable=True),
        sa.Column("table_count", sa.Integer(), nullable=True),
        sa.Column("schema_truncated", sa.Boolean(), nullable=False),
        sa.Column("checked_at", app.models.base.UTCDateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", app.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", app.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_data_sources_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_sources")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_data_sources_project_id")),
    )
    with op.batch_alter_table("data_sources", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_data_sources_project_id"), ["project_id"], unique=False
        )

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
    op.create_table(
        "source_tables",
        sa.Column("source_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("schema_name", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("row_estimate", sa.BigInteger(), nullable=True),
        sa.Column("columns", sa.JSON(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["data_sources.id"],
            name=op.f("fk_source_tables_source_id_data_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source_tables")),
        sa.UniqueConstraint(
            "source_id", "schema_name", "name", name=op.f("uq_source_tables_source_id")
        ),
    )


def downgrade() -> None:
    op.drop_table("source_tables")
    op.drop_table("source_descriptions")
    with op.batch_alter_table("data_sources", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_data_sources_project_id"))

    op.drop_table("data_sources")

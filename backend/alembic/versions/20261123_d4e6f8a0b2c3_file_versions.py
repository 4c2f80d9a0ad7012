"""files keep their versions; runs record the versions their workspace had

Revision ID: d4e6f8a0b2c3
Revises: c3d5e7f9a1b2
Create Date: 2026-11-23 11:40:00.000000
"""

import uuid
from collections.abc import Sequence

import sqlalchemy as sa

import app.models.base
from alembic import op

revision: str = "d4e6f8a0b2c3"
down_revision: str | None = "c3d5e7f9a1b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("files", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version", sa.Integer(), server_default="1", nullable=False))
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("files", sa.JSON(), server_default="[]", nullable=False))
    versions = op.create_table(
        "file_versions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("file_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("storage_key", sa.String(length=512), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=True),
        sa.Column("created_at", app.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["file_id"],
            ["files.id"],
            name=op.f("fk_file_versions_file_id_files"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_versions")),
        sa.UniqueConstraint("file_id", "version", name=op.f("uq_file_versions_file_id")),
        sa.UniqueConstraint("storage_key", name=op.f("uq_file_versions_storage_key")),
    )
    with op.batch_alter_table("file_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_file_versions_file_id"), ["file_id"], unique=False)
    # Each existing file's bytes are its version 1.
    files = sa.table(
        "files",
        sa.column("id", sa.Uuid()),
        sa.column("size", sa.BigInteger()),
        sa.column("sha256", sa.String()),
        sa.column("storage_key", sa.String()),
        sa.column("row_count", sa.BigInteger()),
        sa.column("updated_at", app.models.base.UTCDateTime(timezone=True)),
    )
    rows = op.get_bind().execute(sa.select(files)).all()
    if rows:
        op.bulk_insert(
            versions,
            [
                {
                    "id": uuid.uuid4(),
                    "file_id": row.id,
                    "version": 1,
                    "size": row.size,
                    "sha256": row.sha256,
                    "storage_key": row.storage_key,
                    "row_count": row.row_count,
                    "created_at": row.updated_at,
                }
                for row in rows
            ],
        )


def downgrade() -> None:
    with op.batch_alter_table("file_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_file_versions_file_id"))
    op.drop_table("file_versions")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("files")
    with op.batch_alter_table("files", schema=None) as batch_op:
        batch_op.drop_column("version")

"""storage quotas: who uploaded each file version, and a user's own quota

Revision ID: f1a2b3c4d5e6
Revises: e4f5a6b7c8d9
Create Date: 2026-11-29 01:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "f1a2b3c4d5e6"
down_revision: str | None = "e4f5a6b7c8d9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("storage_quota_mb", sa.Integer(), nullable=True))
    with op.batch_alter_table("file_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("uploaded_by", sa.Uuid(), nullable=True))
        batch_op.create_index("ix_file_versions_uploaded_by", ["uploaded_by"])
        batch_op.create_foreign_key(
            "fk_file_versions_uploaded_by_users",
            "users",
            ["uploaded_by"],
            ["id"],
            ondelete="SET NULL",
        )
    # Versions uploaded before anyone was recorded are charged to their project's owner.
    op.execute(
        "UPDATE file_versions SET uploaded_by = (SELECT projects.owner_id FROM files "
        "JOIN projects ON projects.id = files.project_id WHERE files.id = file_versions.file_id)"
    )


def downgrade() -> None:
    with op.batch_alter_table("file_versions", schema=None) as batch_op:
        batch_op.drop_constraint("fk_file_versions_uploaded_by_users", type_="foreignkey")
        batch_op.drop_index("ix_file_versions_uploaded_by")
        batch_op.drop_column("uploaded_by")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("storage_quota_mb")

"""session snapshots

Revision ID: 5e1f0c2a9b7d
Revises: a30c448315cb
Create Date: 2026-11-23 04:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "5e1f0c2a9b7d"
down_revision: str | None = "a30c448315cb"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("snapshot", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("snapshot")

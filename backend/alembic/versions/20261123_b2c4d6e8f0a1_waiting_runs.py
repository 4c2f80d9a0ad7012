"""runs that wait for the user; review mode

Revision ID: b2c4d6e8f0a1
Revises: 9a4b6c8d0e1f
Create Date: 2026-11-23 09:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

import app.models.base
from alembic import op

revision: str = "b2c4d6e8f0a1"
down_revision: str | None = "9a4b6c8d0e1f"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pending", sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column("waiting_since", app.models.base.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("agent_memory", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("inputs", sa.JSON(), server_default="[]", nullable=False))
        batch_op.add_column(sa.Column("approvals", sa.JSON(), server_default="[]", nullable=False))
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("autonomy", sa.String(length=10), server_default="auto", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("autonomy")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("approvals")
        batch_op.drop_column("inputs")
        batch_op.drop_column("agent_memory")
        batch_op.drop_column("waiting_since")
        batch_op.drop_column("pending")

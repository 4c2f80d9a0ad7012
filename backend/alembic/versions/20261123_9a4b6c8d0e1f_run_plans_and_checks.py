"""run plans and answer checks

Revision ID: 9a4b6c8d0e1f
Revises: 7c3d9e1f4a2b
Create Date: 2026-11-23 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "9a4b6c8d0e1f"
down_revision: str | None = "7c3d9e1f4a2b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("plans", sa.JSON(), server_default="[]", nullable=False))
        batch_op.add_column(
            sa.Column("verifications", sa.JSON(), server_default="[]", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("verifications")
        batch_op.drop_column("plans")

"""project budgets

Revision ID: 7c3d9e1f4a2b
Revises: 5e1f0c2a9b7d
Create Date: 2026-11-23 08:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "7c3d9e1f4a2b"
down_revision: str | None = "5e1f0c2a9b7d"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("budget_usd", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("budget_tokens", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("budget_tokens")
        batch_op.drop_column("budget_usd")

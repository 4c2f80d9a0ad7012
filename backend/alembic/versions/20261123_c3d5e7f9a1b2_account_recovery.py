"""accounts that recover: disabled users, password changes that sign out old logins

Revision ID: c3d5e7f9a1b2
Revises: b2c4d6e8f0a1
Create Date: 2026-11-23 11:15:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

import app.models.base
from alembic import op

revision: str = "c3d5e7f9a1b2"
down_revision: str | None = "b2c4d6e8f0a1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("disabled_at", app.models.base.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column(
                "password_changed_at", app.models.base.UTCDateTime(timezone=True), nullable=True
            )
        )
        batch_op.add_column(
            sa.Column("login_version", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("login_version")
        batch_op.drop_column("password_changed_at")
        batch_op.drop_column("disabled_at")

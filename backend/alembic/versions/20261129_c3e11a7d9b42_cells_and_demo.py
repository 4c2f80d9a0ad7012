"""runs.kind (question | cell) and runs.cell (a cell's language, source and output);
projects.is_demo (the demo project a user opened with no model); sessions.recorded (a
history loaded from a recording, which the browser can replay)

Revision ID: c3e11a7d9b42
Revises: 486a0f3d6372
Create Date: 2026-11-29 07:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "c3e11a7d9b42"
down_revision: str | None = "486a0f3d6372"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=10), nullable=False, server_default="question")
        )
        batch_op.add_column(sa.Column("cell", sa.JSON(), nullable=True))
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("is_demo", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("recorded", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("recorded")
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("is_demo")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("cell")
        batch_op.drop_column("kind")

"""Attempts and verdicts (issue 44): a project's default number of attempts, a run's
attempts and verdict, and which attempt took a step.

Only ADD COLUMNs (no table is rebuilt: runs and run_steps carry search triggers).

Revision ID: a7e3b9d1c5f2
Revises: d7e3a1b5c9f2
Create Date: 2026-11-29 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "a7e3b9d1c5f2"
down_revision: str | None = "d7e3a1b5c9f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "projects",
        sa.Column("default_attempts", sa.Integer(), nullable=False, server_default="1"),
    )
    op.add_column("runs", sa.Column("attempts", sa.JSON(), nullable=True))
    op.add_column("runs", sa.Column("verdict", sa.JSON(), nullable=True))
    op.add_column("run_steps", sa.Column("attempt", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("run_steps", "attempt")
    op.drop_column("runs", "verdict")
    op.drop_column("runs", "attempts")
    op.drop_column("projects", "default_attempts")

"""sessions.parent_session_id, sessions.branched_after_run_id, sessions.restored (issue 43):
a branch knows the session it came from and the run it branched after; `restored` says how
its state was brought back once its first run has it (from a snapshot, or by replay, with
what could not be restored).

Plain ADD COLUMNs (no batch rebuild of `sessions`: the search triggers of 4a2c1e7b9d30 name
it, see there), and no foreign keys: a branch outlives a parent deleted with "keep the
branches" (the service clears the parent then), and SQLite cannot add one in place.

Revision ID: 9b1d2c3e4f50
Revises: 4a2c1e7b9d30
Create Date: 2026-11-29 11:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "9b1d2c3e4f50"
down_revision: str | None = "4a2c1e7b9d30"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("sessions", sa.Column("parent_session_id", sa.Uuid(), nullable=True))
    op.add_column("sessions", sa.Column("branched_after_run_id", sa.Uuid(), nullable=True))
    op.add_column("sessions", sa.Column("restored", sa.JSON(), nullable=True))
    op.create_index("ix_sessions_parent_session_id", "sessions", ["parent_session_id"])


def downgrade() -> None:
    op.drop_index("ix_sessions_parent_session_id", table_name="sessions")
    op.drop_column("sessions", "restored")
    op.drop_column("sessions", "branched_after_run_id")
    op.drop_column("sessions", "parent_session_id")

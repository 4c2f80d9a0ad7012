"""run_states and snapshot_chunks (issue 43, state at every question): the snapshot record a
run left, kept per run, and the content-addressed chunks the records are stored as (one
row a chunk and project; the bytes are in object storage under
`snapshot-chunks/<project>/<sha256>`).

New tables only: nothing of sessions/runs/steps/artifacts is rebuilt (their search
triggers, see 4a2c1e7b9d30, are untouched). Existing one-object snapshots keep working
until their session's next run replaces them.

Revision ID: c4d8e2f6a1b3
Revises: 9b1d2c3e4f50
Create Date: 2026-11-29 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from app.models.base import UTCDateTime

revision: str = "c4d8e2f6a1b3"
down_revision: str | None = "9b1d2c3e4f50"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_states",
        sa.Column(
            "run_id",
            sa.Uuid(),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "session_id",
            sa.Uuid(),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "project_id",
            sa.Uuid(),
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("new_bytes", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_run_states_session_id", "run_states", ["session_id"])
    op.create_index("ix_run_states_project_id", "run_states", ["project_id"])
    op.create_table(
        "snapshot_chunks",
        sa.Column(
            "project_id",
            sa.Uuid(),
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("used_at", UTCDateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_snapshot_chunks_used_at", "snapshot_chunks", ["used_at"])


def downgrade() -> None:
    op.drop_index("ix_snapshot_chunks_used_at", table_name="snapshot_chunks")
    op.drop_table("snapshot_chunks")
    op.drop_index("ix_run_states_project_id", table_name="run_states")
    op.drop_index("ix_run_states_session_id", table_name="run_states")
    op.drop_table("run_states")

"""A branch's file versions and the orphan chunks seen by the sweep (issue 43).

`session_file_pins`: the version of a project file a branch reads (app.branches.pins).
`snapshot_orphan_suspects`: chunk objects seen in storage with no row, and when, shared by
every replica (app.runs.chunk_sweep). `projects.snapshot_floor`: a refused state save's
findings (app.runs.bound_floor). New tables and one ADD COLUMN.

Revision ID: f9d5b1c7e3a8
Revises: b8d4f0a2c6e1
Create Date: 2026-11-29 18:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from app.models.base import UTCDateTime

revision: str = "f9d5b1c7e3a8"
down_revision: str | None = "c5a1e7d3b9f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("projects", sa.Column("snapshot_floor", sa.JSON(), nullable=True))
    op.create_table(
        "session_file_pins",
        sa.Column(
            "session_id",
            sa.Uuid(),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "file_id", sa.Uuid(), sa.ForeignKey("files.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_session_file_pins_file_id", "session_file_pins", ["file_id"])
    op.create_table(
        "snapshot_orphan_suspects",
        sa.Column(
            "project_id",
            sa.Uuid(),
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("seen_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", UTCDateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("snapshot_orphan_suspects")
    op.drop_index("ix_session_file_pins_file_id", table_name="session_file_pins")
    op.drop_table("session_file_pins")
    op.drop_column("projects", "snapshot_floor")

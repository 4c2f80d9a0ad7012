"""job_repairs (issue 45, point 3): code the model proposed after a job run failed.

A new table only.

Revision ID: c5a1e7d3b9f4
Revises: b8d4f0a2c6e1
Create Date: 2026-11-29 18:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from app.models.base import UTCDateTime

revision: str = "c5a1e7d3b9f4"
down_revision: str | None = "b8d4f0a2c6e1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job_repairs",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column(
            "job_id", sa.Uuid(), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "project_id",
            sa.Uuid(),
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "job_run_id",
            sa.Uuid(),
            sa.ForeignKey("job_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("old_code", sa.Text(), nullable=False),
        sa.Column("new_code", sa.Text(), nullable=True),
        sa.Column("old_tests", sa.Text(), nullable=False),
        sa.Column("new_tests", sa.Text(), nullable=True),
        sa.Column("diff", sa.Text(), nullable=False),
        sa.Column("checks", sa.JSON(), nullable=False),
        sa.Column("checked_on", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("lease_until", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("proposed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "decided_by", sa.Uuid(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("decided_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("applied_at", UTCDateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_job_repairs_job_id", "job_repairs", ["job_id"])
    op.create_index("ix_job_repairs_project_id", "job_repairs", ["project_id"])
    op.create_index("ix_job_repairs_job_run_id", "job_repairs", ["job_run_id"])


def downgrade() -> None:
    op.drop_table("job_repairs")

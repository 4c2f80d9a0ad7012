"""job_schedules and job_deliveries (issue 45, points 4 and 5): jobs' schedules with the lease
a replica takes to fire a tick, and the deliveries of their alerts with their retries.

New tables only. job_id / job_run_id are plain strings: the foreign keys to the jobs'
tables are added where those tables' migration meets this one.

Revision ID: d7e1a9c3b5f2
Revises: b1c3e5a7d9f0
Create Date: 2026-11-29 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from app.models.base import UTCDateTime

revision: str = "d7e1a9c3b5f2"
down_revision: str | None = "b1c3e5a7d9f0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job_schedules",
        sa.Column("job_id", sa.String(36), primary_key=True),
        sa.Column("cron", sa.String(200), nullable=True),
        sa.Column("every_minutes", sa.Integer(), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("next_run_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_tick_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_until", UTCDateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_job_schedules_due", "job_schedules", ["paused", "next_run_at"])
    op.create_table(
        "job_deliveries",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("job_run_id", sa.String(36), nullable=False),
        sa.Column("job_id", sa.String(36), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("secret_sealed", sa.Text(), nullable=True),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_until", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("sent_at", UTCDateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_job_deliveries_job_run_id", "job_deliveries", ["job_run_id"])
    op.create_index("ix_job_deliveries_job_id", "job_deliveries", ["job_id"])
    op.create_index("ix_job_deliveries_due", "job_deliveries", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_job_deliveries_due", table_name="job_deliveries")
    op.drop_index("ix_job_deliveries_job_id", table_name="job_deliveries")
    op.drop_index("ix_job_deliveries_job_run_id", table_name="job_deliveries")
    op.drop_table("job_deliveries")
    op.drop_index("ix_job_schedules_due", table_name="job_schedules")
    op.drop_table("job_schedules")

"""Job runs of a schedule's tick (issue 45): the tick each ran for, one run a tick.

Only ADD COLUMN and a new index (job_runs carries no triggers, but nothing is rebuilt).

Revision ID: b8d4f0a2c6e1
Revises: a7e3b9d1c5f2
Create Date: 2026-11-29 16:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from app.models.base import UTCDateTime

revision: str = "b8d4f0a2c6e1"
down_revision: str | None = "a7e3b9d1c5f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("job_runs", sa.Column("scheduled_for", UTCDateTime(timezone=True), nullable=True))
    op.create_index("uq_job_runs_tick", "job_runs", ["job_id", "scheduled_for"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_job_runs_tick", table_name="job_runs")
    op.drop_column("job_runs", "scheduled_for")

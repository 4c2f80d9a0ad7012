"""A job's share link (issue 45): a share of a job (shares.job_id) always shows the job's
latest run; its token is kept sealed (shares.token_sealed, as source passwords are) so that
alert messages can carry the link.

Only ADD COLUMN and a new index (nothing rebuilt). No foreign key on job_id: a job's share
is deleted with the job (app.jobs.cleanup), and with its session (the job's own session,
shares.session_id cascades) when the project goes.

Revision ID: d6b2f8a4c0e3
Revises: b8d4f0a2c6e1
Create Date: 2026-11-29 18:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "d6b2f8a4c0e3"
down_revision: str | None = "f9d5b1c7e3a8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("shares", sa.Column("job_id", sa.Uuid(), nullable=True))
    op.add_column("shares", sa.Column("token_sealed", sa.Text(), nullable=True))
    op.create_index("ix_shares_job_id", "shares", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_shares_job_id", table_name="shares")
    op.drop_column("shares", "token_sealed")
    op.drop_column("shares", "job_id")

"""projects.snapshot_refusal (issue 43): why the project's last state save was refused
(its states over SNAPSHOT_PROJECT_MAX_MB with only each session's latest left), naming what
to delete; null once a save is kept again. A plain nullable ADD COLUMN.

Revision ID: d7e3a1b5c9f2
Revises: e3b5c7d9f1a2
Create Date: 2026-11-29 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "d7e3a1b5c9f2"
down_revision: str | None = "e3b5c7d9f1a2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("projects", sa.Column("snapshot_refusal", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("projects", "snapshot_refusal")

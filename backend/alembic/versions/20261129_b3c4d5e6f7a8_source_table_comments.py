"""source_tables.comment: the database's own COMMENT on a table (PostgreSQL's COMMENT ON
TABLE, MySQL's table COMMENT), cached by each check as the rest of the schema is; the
columns' comments ride in the existing `columns` JSON

Revision ID: b3c4d5e6f7a8
Revises: c3e11a7d9b42
Create Date: 2026-11-29 08:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "b3c4d5e6f7a8"
down_revision: str | None = "c3e11a7d9b42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("source_tables") as batch:
        batch.add_column(sa.Column("comment", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("source_tables") as batch:
        batch.drop_column("comment")

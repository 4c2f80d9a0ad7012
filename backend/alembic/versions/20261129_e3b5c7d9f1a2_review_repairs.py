"""sessions.autonomy holds "review_repairs" (issue 44): the column widens from 10 to 20
characters.

Postgres only: a varchar widening there is a change of the catalogue (no table rewrite, the
search triggers stay). SQLite does not enforce a VARCHAR's length, so nothing changes there
(no batch rebuild of sessions, which carries FTS triggers).

Revision ID: e3b5c7d9f1a2
Revises: d7e1a9c3b5f2
Create Date: 2026-11-29 15:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "e3b5c7d9f1a2"
down_revision: str | None = "d7e1a9c3b5f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "sessions",
            "autonomy",
            type_=sa.String(length=20),
            existing_type=sa.String(length=10),
            existing_nullable=False,
            existing_server_default="auto",
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE sessions SET autonomy = 'review' WHERE autonomy = 'review_repairs'")
        op.alter_column(
            "sessions",
            "autonomy",
            type_=sa.String(length=10),
            existing_type=sa.String(length=20),
            existing_nullable=False,
            existing_server_default="auto",
        )

"""knowledge_items: an index on (project_id, updated_at), so that the version of a
project's knowledge (how many items, when one last changed) that every question checks
before using its cached selection index reads the index alone

Revision ID: 486a0f3d6372
Revises: a7b8c9d0e1f2
Create Date: 2026-11-29 04:50:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "486a0f3d6372"
down_revision: str | None = "a7b8c9d0e1f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_knowledge_items_project_id_updated_at",
        "knowledge_items",
        ["project_id", "updated_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_knowledge_items_project_id_updated_at", table_name="knowledge_items")

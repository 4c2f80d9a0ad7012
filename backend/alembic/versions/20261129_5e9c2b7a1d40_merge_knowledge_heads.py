"""Merge point of two migrations made side by side after a7b8c9d0e1f2: the data dictionary
moved into knowledge items (10ac2d1b0630) and the index of a project's knowledge version
(486a0f3d6372). No schema change; the lead may re-chain the two and drop this at merge.

Revision ID: 5e9c2b7a1d40
Revises: 10ac2d1b0630, 486a0f3d6372
Create Date: 2026-11-29 05:15:00.000000
"""

from collections.abc import Sequence

revision: str = "5e9c2b7a1d40"
down_revision: str | tuple[str, ...] | None = ("10ac2d1b0630", "486a0f3d6372")
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

"""Sign-in a company can use: invites, users who must change an administrator's password,
and the one-time records of single sign-on (state at the provider, login codes)

Revision ID: 5e1f2a3b4c6d
Revises: b3c4d5e6f7a8
Create Date: 2026-11-29 08:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "5e1f2a3b4c6d"
down_revision: str | None = "b3c4d5e6f7a8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column(
                "must_change_password", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
    op.create_table(
        "invites",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("role", sa.String(length=10), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("email_status", sa.String(length=16), nullable=False),
        sa.Column("email_error", sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_invites_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_invites_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invites")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_invites_token_hash")),
    )
    op.create_index(op.f("ix_invites_email"), "invites", ["email"], unique=False)
    op.create_index(op.f("ix_invites_project_id"), "invites", ["project_id"], unique=False)
    op.create_table(
        "sign_in_handoffs",
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key_hash", name=op.f("pk_sign_in_handoffs")),
    )
    op.create_index(
        op.f("ix_sign_in_handoffs_expires_at"), "sign_in_handoffs", ["expires_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_sign_in_handoffs_expires_at"), table_name="sign_in_handoffs")
    op.drop_table("sign_in_handoffs")
    op.drop_index(op.f("ix_invites_project_id"), table_name="invites")
    op.drop_index(op.f("ix_invites_email"), table_name="invites")
    op.drop_table("invites")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("must_change_password")

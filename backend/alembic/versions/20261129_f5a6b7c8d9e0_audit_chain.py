"""the audit log becomes a hash chain per project (seq, prev_hash, hash; audit_chains)

The events kept so far are numbered and hashed in the order they were recorded (time, then
id), each project's chain head written. Self-contained: it only adds to audit_events.

Revision ID: f5a6b7c8d9e0
Revises: f1a2b3c4d5e6
Create Date: 2026-11-29 01:30:00.000000
"""

from collections.abc import Sequence
from datetime import UTC

import sqlalchemy as sa

from alembic import op
from app.audit_chain import GENESIS, digest
from app.models import AuditEvent

revision: str = "f5a6b7c8d9e0"
down_revision: str | None = "f1a2b3c4d5e6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EVENTS = sa.table(
    "audit_events",
    *(
        sa.column(name, kind)
        for name, kind in (
            ("id", sa.Uuid()),
            ("project_id", sa.Uuid()),
            ("at", sa.DateTime(timezone=True)),
            ("actor_id", sa.Uuid()),
            ("actor_email", sa.String()),
            ("action", sa.String()),
            ("subject_type", sa.String()),
            ("subject_id", sa.String()),
            ("summary", sa.Text()),
            ("detail", sa.JSON()),
            ("seq", sa.Integer()),
            ("prev_hash", sa.String()),
            ("hash", sa.String()),
        )
    ),
)
CHAINS = sa.table(
    "audit_chains",
    sa.column("project_id", sa.Uuid()),
    sa.column("seq", sa.Integer()),
    sa.column("head", sa.String()),
)


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "audit_chains",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("head", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_audit_chains")),
    )
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seq", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("prev_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("hash", sa.String(length=64), nullable=True))
    if postgres:  # the append-only trigger lets this one backfill through
        op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
    _hash_existing()
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.alter_column("seq", existing_type=sa.Integer(), nullable=False)
        batch_op.alter_column("prev_hash", existing_type=sa.String(length=64), nullable=False)
        batch_op.alter_column("hash", existing_type=sa.String(length=64), nullable=False)
        batch_op.create_unique_constraint(
            batch_op.f("uq_audit_events_project_id"), ["project_id", "seq"]
        )
    if postgres:
        op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only")


def _hash_existing() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(EVENTS).order_by(EVENTS.c.project_id, EVENTS.c.at, EVENTS.c.id)
    ).mappings()
    heads: dict[object, tuple[int, str]] = {}
    for row in rows.all():
        seq, before = heads.get(row["project_id"], (0, GENESIS))
        at = row["at"] if row["at"].tzinfo else row["at"].replace(tzinfo=UTC)
        fields = {k: row[k] for k in row if k not in ("at", "seq", "prev_hash", "hash")}
        event = AuditEvent(**fields, at=at, seq=seq + 1, prev_hash=before)
        event.hash = digest(event, before)
        bind.execute(
            EVENTS.update()
            .where(EVENTS.c.id == row["id"])
            .values(seq=event.seq, prev_hash=before, hash=event.hash)
        )
        heads[row["project_id"]] = (event.seq, event.hash)
    if heads:
        bind.execute(
            CHAINS.insert(),
            [{"project_id": p, "seq": seq, "head": head} for p, (seq, head) in heads.items()],
        )


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_audit_events_project_id"), type_="unique")
        batch_op.drop_column("hash")
        batch_op.drop_column("prev_hash")
        batch_op.drop_column("seq")
    if postgres:
        op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only")
    op.drop_table("audit_chains")

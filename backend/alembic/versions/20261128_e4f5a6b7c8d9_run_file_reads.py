"""runs keep which project files their code read (run_file_reads)

Revision ID: e4f5a6b7c8d9
Revises: d2e3f4a5b6c7
Create Date: 2026-11-28 09:00:00.000000
"""

import uuid
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "e4f5a6b7c8d9"
down_revision: str | None = "d2e3f4a5b6c7"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNS = sa.table(
    "runs",
    sa.column("id", sa.Uuid()),
    sa.column("file_ids", sa.JSON()),
    sa.column("files", sa.JSON()),
)
STEPS = sa.table("run_steps", sa.column("run_id", sa.Uuid()), sa.column("code", sa.Text()))
READS = sa.table(
    "run_file_reads",
    sa.column("run_id", sa.Uuid()),
    sa.column("file_id", sa.Uuid()),
    sa.column("version", sa.Integer()),
)


def upgrade() -> None:
    op.create_table(
        "run_file_reads",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("file_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_file_reads_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "file_id", name=op.f("pk_run_file_reads")),
    )
    with op.batch_alter_table("run_file_reads", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_file_reads_file_id"), ["file_id"], unique=False)
    _infer_earlier_reads()


def _infer_earlier_reads() -> None:
    """Runs recorded before the sandbox watched reads get what the run view used to infer:
    a file was read when it was pinned to the question or its name is in a step's code (a
    glob or a name in a variable is missed, a name in a comment counts; nothing better is
    known of them)."""
    db = op.get_bind()
    code: dict[object, list[str]] = {}
    for run_id, text in db.execute(sa.select(STEPS.c.run_id, STEPS.c.code)):
        if text:
            code.setdefault(run_id, []).append(text)
    rows = []
    for run_id, file_ids, files in db.execute(sa.select(RUNS.c.id, RUNS.c.file_ids, RUNS.c.files)):
        pinned = {str(f) for f in file_ids or []}
        steps = "\n".join(code.get(run_id, []))
        seen = set()
        for entry in files or []:
            file_id, name, version = (
                str(entry.get("file_id")),
                entry.get("name"),
                entry.get("version"),
            )
            if file_id in seen or not isinstance(version, int):
                continue
            if file_id in pinned or (isinstance(name, str) and name and name in steps):
                seen.add(file_id)
                rows.append({"run_id": run_id, "file_id": uuid.UUID(file_id), "version": version})
    if rows:
        op.bulk_insert(READS, rows)


def downgrade() -> None:
    with op.batch_alter_table("run_file_reads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_file_reads_file_id"))
    op.drop_table("run_file_reads")

"""comments, notifications, and full-text search over what a session holds

`comments` and `notifications` (issue 42, point 9). Search (point 8) in the database's own
full-text engine: on PostgreSQL, GIN indexes on `to_tsvector('english', …)` of sessions'
titles, runs' questions and answers, steps' code and artifacts' names (the search queries
use the same expressions); on SQLite, an FTS5 table `search_index` filled from what exists
and kept current by triggers on those tables.

A later migration that rebuilds one of those tables on SQLite (`batch_alter_table` copies it
and renames the copy) fails while these triggers name the tables ("error in trigger …: no
such table"): drop the triggers first (`DROP TRIGGER` of each name in SQLITE_TRIGGERS) and
make them again after, from SQLITE_TRIGGERS as this migration does.

Revision ID: 4a2c1e7b9d30
Revises: 5e1f2a3b4c6d
Create Date: 2026-11-29 07:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from app.models.base import UTCDateTime

revision: str = "4a2c1e7b9d30"
down_revision: str | None = "5e1f2a3b4c6d"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Code and names are searched with their punctuation as spaces (app.search.postgres.words_of).
_PUNCTUATION = "'._-/()[],=:'"
_SPACES = "'" + " " * (len(_PUNCTUATION) - 2) + "'"

# (index name, table, the text it searches): the expressions app.search.postgres matches.
PG_INDEXES = [
    ("ix_sessions_title_fts", "sessions", "title"),
    ("ix_runs_query_fts", "runs", "query"),
    ("ix_runs_final_answer_fts", "runs", "coalesce(final_answer, '')"),
    (
        "ix_run_steps_code_fts",
        "run_steps",
        f"translate(coalesce(code, ''), {_PUNCTUATION}, {_SPACES})",
    ),
    ("ix_artifacts_name_fts", "artifacts", f"translate(name, {_PUNCTUATION}, {_SPACES})"),
]

# What each kind of hit is made of on SQLite: kind, ref (the row), session, run, project, text.
SQLITE_FILL = [
    "INSERT INTO search_index(kind, ref, session_id, run_id, project_id, body) "
    "SELECT 'session', s.id, s.id, NULL, s.project_id, s.title FROM sessions s",
    "INSERT INTO search_index(kind, ref, session_id, run_id, project_id, body) "
    "SELECT 'question', r.id, r.session_id, r.id, s.project_id, r.query "
    "FROM runs r JOIN sessions s ON s.id = r.session_id",
    "INSERT INTO search_index(kind, ref, session_id, run_id, project_id, body) "
    "SELECT 'answer', r.id, r.session_id, r.id, s.project_id, r.final_answer "
    "FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.final_answer IS NOT NULL",
    "INSERT INTO search_index(kind, ref, session_id, run_id, project_id, body) "
    "SELECT 'code', st.id, r.session_id, r.id, s.project_id, st.code FROM run_steps st "
    "JOIN runs r ON r.id = st.run_id JOIN sessions s ON s.id = r.session_id "
    "WHERE st.code IS NOT NULL",
    "INSERT INTO search_index(kind, ref, session_id, run_id, project_id, body) "
    "SELECT 'artifact', a.id, a.session_id, a.run_id, s.project_id, a.name FROM artifacts a "
    "JOIN sessions s ON s.id = a.session_id",
]

_INSERT = "INSERT INTO search_index(kind, ref, session_id, run_id, project_id, body) "
_PROJECT = "(SELECT project_id FROM sessions WHERE id = {session})"

SQLITE_TRIGGERS = {
    "search_sessions_insert": "AFTER INSERT ON sessions BEGIN "
    + _INSERT
    + "VALUES ('session', new.id, new.id, NULL, new.project_id, new.title); END",
    "search_sessions_title": "AFTER UPDATE OF title ON sessions BEGIN "
    "UPDATE search_index SET body = new.title WHERE kind = 'session' AND ref = new.id; END",
    "search_sessions_delete": "AFTER DELETE ON sessions BEGIN "
    "DELETE FROM search_index WHERE session_id = old.id; END",
    "search_runs_insert": "AFTER INSERT ON runs BEGIN "
    + _INSERT
    + "VALUES ('question', new.id, new.session_id, new.id, "
    + _PROJECT.format(session="new.session_id")
    + ", new.query); "
    + _INSERT
    + "SELECT 'answer', new.id, new.session_id, new.id, "
    + _PROJECT.format(session="new.session_id")
    + ", new.final_answer WHERE new.final_answer IS NOT NULL; END",
    "search_runs_answer": "AFTER UPDATE OF final_answer ON runs BEGIN "
    "DELETE FROM search_index WHERE kind = 'answer' AND ref = old.id; "
    + _INSERT
    + "SELECT 'answer', new.id, new.session_id, new.id, "
    + _PROJECT.format(session="new.session_id")
    + ", new.final_answer WHERE new.final_answer IS NOT NULL; END",
    "search_runs_delete": "AFTER DELETE ON runs BEGIN "
    "DELETE FROM search_index WHERE run_id = old.id; END",
    "search_steps_insert": "AFTER INSERT ON run_steps WHEN new.code IS NOT NULL BEGIN "
    + _INSERT
    + "SELECT 'code', new.id, r.session_id, r.id, s.project_id, new.code FROM runs r "
    "JOIN sessions s ON s.id = r.session_id WHERE r.id = new.run_id; END",
    "search_steps_code": "AFTER UPDATE OF code ON run_steps BEGIN "
    "DELETE FROM search_index WHERE kind = 'code' AND ref = old.id; "
    + _INSERT
    + "SELECT 'code', new.id, r.session_id, r.id, s.project_id, new.code FROM runs r "
    "JOIN sessions s ON s.id = r.session_id WHERE r.id = new.run_id AND new.code IS NOT NULL; "
    "END",
    "search_steps_delete": "AFTER DELETE ON run_steps BEGIN "
    "DELETE FROM search_index WHERE kind = 'code' AND ref = old.id; END",
    "search_artifacts_insert": "AFTER INSERT ON artifacts BEGIN "
    + _INSERT
    + "VALUES ('artifact', new.id, new.session_id, new.run_id, "
    + _PROJECT.format(session="new.session_id")
    + ", new.name); END",
    "search_artifacts_delete": "AFTER DELETE ON artifacts BEGIN "
    "DELETE FROM search_index WHERE kind = 'artifact' AND ref = old.id; END",
}


def upgrade() -> None:
    op.create_table(
        "comments",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("author_id", sa.Uuid(), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("reply_to", sa.Uuid(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_comments_run_id_runs", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name="fk_comments_author_id_users", ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["reply_to"], ["comments.id"], name="fk_comments_reply_to_comments", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_comments"),
    )
    op.create_index("ix_comments_run_id_created_at", "comments", ["run_id", "created_at"])
    op.create_index("ix_comments_reply_to", "comments", ["reply_to"])
    op.create_table(
        "notifications",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("session_id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("comment_id", sa.Uuid(), nullable=False),
        sa.Column("actor_email", sa.String(length=320), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("read_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_notifications_user_id_users", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name="fk_notifications_project_id_projects",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            name="fk_notifications_session_id_sessions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_notifications_run_id_runs", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["comment_id"],
            ["comments.id"],
            name="fk_notifications_comment_id_comments",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_notifications"),
    )
    op.create_index(
        "ix_notifications_user_id_created_at", "notifications", ["user_id", "created_at"]
    )
    op.create_index("ix_notifications_comment_id", "notifications", ["comment_id"])
    if op.get_bind().dialect.name == "postgresql":
        for name, table, expression in PG_INDEXES:
            op.execute(
                f"CREATE INDEX {name} ON {table} "
                f"USING gin (to_tsvector('english'::regconfig, {expression}))"
            )
        return
    op.execute(
        "CREATE VIRTUAL TABLE search_index USING fts5("
        "kind UNINDEXED, ref UNINDEXED, session_id UNINDEXED, run_id UNINDEXED, "
        "project_id UNINDEXED, body, tokenize = 'porter unicode61')"
    )
    for statement in SQLITE_FILL:
        op.execute(statement)
    for name, body in SQLITE_TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {body}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name, _, _ in PG_INDEXES:
            op.execute(f"DROP INDEX IF EXISTS {name}")
    else:
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS search_index")
    op.drop_index("ix_notifications_comment_id", table_name="notifications")
    op.drop_index("ix_notifications_user_id_created_at", table_name="notifications")
    op.drop_table("notifications")
    op.drop_index("ix_comments_reply_to", table_name="comments")
    op.drop_index("ix_comments_run_id_created_at", table_name="comments")
    op.drop_table("comments")

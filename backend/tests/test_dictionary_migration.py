"""The migration that moves the data dictionary into knowledge items keeps every description:
each source_descriptions row becomes an approved `column` item of its source's project (a
table's own description with no column), and downgrading moves them back."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from alembic import command
from app.db import alembic_config
from tests.test_run_reads_migration import insert

BEFORE, AFTER = "a7b8c9d0e1f2", "10ac2d1b0630"


def test_descriptions_become_column_items_and_come_back(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, BEFORE)
    project, source = uuid.uuid4(), uuid.uuid4()
    with sqlite3.connect(path) as db:
        insert(db, "projects", id=project.hex, name="Shop")
        insert(db, "data_sources", id=source.hex, project_id=project.hex, name="shop")
        for column, text in (("", "One row per order"), ("amount", "In euros")):
            insert(
                db,
                "source_descriptions",
                id=uuid.uuid4().hex,
                source_id=source.hex,
                schema_name="public",
                table_name="orders",
                column_name=column,
                description=text,
                updated_at="2026-11-01 10:00:00.000000",
            )
    command.upgrade(config, AFTER)
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT project_id, kind, status, title, body, source_id, table_name, column_name,"
            " tokens, flags FROM knowledge_items ORDER BY title"
        ).fetchall()
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert rows == [
        (project.hex, "column", "approved", "public.orders", "One row per order", source.hex,
         "public.orders", None, 8, "[]"),
        (project.hex, "column", "approved", "public.orders.amount", "In euros", source.hex,
         "public.orders", "amount", 7, "[]"),
    ]  # fmt: skip
    assert "source_descriptions" not in tables

    command.downgrade(config, BEFORE)
    with sqlite3.connect(path) as db:
        back = db.execute(
            "SELECT source_id, schema_name, table_name, column_name, description"
            " FROM source_descriptions ORDER BY column_name"
        ).fetchall()
        left = db.execute("SELECT count(*) FROM knowledge_items").fetchone()
    assert back == [
        (source.hex, "public", "orders", "", "One row per order"),
        (source.hex, "public", "orders", "amount", "In euros"),
    ]
    assert left == (0,)

"""The migration that made run_file_reads gives runs recorded before it what the run view used
to infer of them: a file was read when it was pinned to the question or its name is in a
step's code."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from alembic import command
from app.db import alembic_config

BEFORE = "d2e3f4a5b6c7"


def insert(db: sqlite3.Connection, table: str, **values: Any) -> None:
    """A row with the given values, and a placeholder in every other required column."""
    for _, name, kind, required, default, _ in db.execute(f"PRAGMA table_info({table})"):
        if name not in values and required and default is None:
            values[name] = 0 if kind.upper() in ("INTEGER", "BIGINT", "FLOAT", "BOOLEAN") else ""
    names = ", ".join(f'"{name}"' for name in values)
    marks = ", ".join("?" for _ in values)
    db.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values()))


def test_earlier_runs_get_the_files_pinned_or_named_in_their_code(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    config = alembic_config(f"sqlite+aiosqlite:///{path}")
    command.upgrade(config, BEFORE)
    sales, costs, notes = (uuid.uuid4() for _ in range(3))
    files = [
        {"file_id": str(sales), "name": "sales.csv", "version": 2, "sha256": "a"},
        {"file_id": str(costs), "name": "costs.csv", "version": 1, "sha256": "b"},
        {"file_id": str(notes), "name": "notes.txt", "version": 1, "sha256": "c"},
    ]
    named, pinned, neither = (uuid.uuid4() for _ in range(3))
    with sqlite3.connect(path) as db:
        for run, file_ids in ((named, []), (pinned, [str(costs)]), (neither, [])):
            insert(db, "runs", id=run.hex, file_ids=json.dumps(file_ids), files=json.dumps(files))
        code = {named: "pd.read_csv('sales.csv')", pinned: "print(1)", neither: None}
        for run, text in code.items():
            insert(db, "run_steps", id=uuid.uuid4().hex, run_id=run.hex, index=1, code=text)
    command.upgrade(config, "head")
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT run_id, file_id, version FROM run_file_reads").fetchall()
    assert sorted(rows) == sorted([(named.hex, sales.hex, 2), (pinned.hex, costs.hex, 1)])

"""The migration that made the audit log a hash chain numbers and hashes the events kept
before it, each project's in the order they were recorded, so that verify finds them
intact; and an event changed afterwards is named."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from alembic import command
from app import audit_chain
from app.audit_chain import Verdict
from app.db import alembic_config
from tests.test_run_reads_migration import insert

BEFORE = "e4f5a6b7c8d9"


def verdicts(url: str, projects: list[uuid.UUID]) -> list[Verdict]:
    async def walk() -> list[Verdict]:
        engine = create_async_engine(url)
        try:
            async with async_sessionmaker(engine)() as db:
                return [await audit_chain.verify(db, project) for project in projects]
        finally:
            await engine.dispose()

    return asyncio.run(walk())


def test_events_kept_before_are_chained_in_order_and_verify_intact(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    url = f"sqlite+aiosqlite:///{path}"
    config = alembic_config(url)
    command.upgrade(config, BEFORE)
    first, second = uuid.uuid4(), uuid.uuid4()
    stamps = ["2026-11-27 10:00:00.000001", "2026-11-27 09:00:00.000000", "2026-11-27 11:30:00"]
    with sqlite3.connect(path) as db:
        for n, at in enumerate(stamps):
            insert(
                db,
                "audit_events",
                id=uuid.uuid4().hex,
                project_id=first.hex,
                at=at,
                action="member.added",
                subject_type="member",
                summary=f"event {n}",
                detail=json.dumps({"n": n, "email": "é@example.com"}),
            )
        insert(
            db,
            "audit_events",
            id=uuid.uuid4().hex,
            project_id=second.hex,
            at=stamps[0],
            action="project.created",
            subject_type="project",
            summary="made",
            detail="{}",
        )
    command.upgrade(config, "head")
    with sqlite3.connect(path) as db:
        order = db.execute(
            "SELECT summary FROM audit_events WHERE project_id = ? ORDER BY seq", (first.hex,)
        ).fetchall()
        heads = dict(db.execute("SELECT project_id, seq FROM audit_chains").fetchall())
    assert [s for (s,) in order] == ["event 1", "event 0", "event 2"]  # by time
    assert heads == {first.hex: 3, second.hex: 1}
    one, two = verdicts(url, [first, second])
    assert (one.intact, one.events, two.intact, two.events) == (True, 3, True, 1)

    with sqlite3.connect(path) as db:
        db.execute("UPDATE audit_events SET summary = 'nothing' WHERE summary = 'event 0'")
    [changed] = verdicts(url, [first])
    assert not changed.intact and changed.seq == 2
    assert changed.sentence.startswith("event #2 (member.added at 2026-11-27 10:00:00 UTC")
    assert changed.sentence.endswith("was changed after it was recorded")

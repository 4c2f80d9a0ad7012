"""Attacks on the audit log by someone with access to the database itself (issue 40): they
change an event, remove one (in the middle, or the last), insert a forged one, or remove one
and renumber the rest to close the gap. On SQLite nothing stops the write; on PostgreSQL
the attacker, a superuser, turns the append-only trigger off first. Each project's log is
a hash chain: `GET /projects/{id}/audit/verify` (and `workbench audit verify`) names the
first event that does not hold, on both stacks; an untouched log reads "intact".
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.models import AuditEvent
from tests.api.conftest import SALES
from tests.conftest import Api
from tests.support.server import LiveServer

Tamper = Callable[[AsyncConnection, uuid.UUID], Coroutine[Any, Any, None]]
TRIGGER = "audit_events_append_only"


def where(project: uuid.UUID, seq: int) -> Any:
    return (AuditEvent.project_id == project) & (AuditEvent.seq == seq)


async def change(conn: AsyncConnection, project: uuid.UUID) -> None:
    values = {"summary": "bob@example.com added nobody."}
    await conn.execute(update(AuditEvent).where(where(project, 2)).values(**values))


async def change_detail(conn: AsyncConnection, project: uuid.UUID) -> None:
    values = {"detail": {"email": "mallory@example.com", "role": "viewer"}}
    await conn.execute(update(AuditEvent).where(where(project, 2)).values(**values))


async def remove(conn: AsyncConnection, project: uuid.UUID) -> None:
    await conn.execute(delete(AuditEvent).where(where(project, 3)))


async def remove_last(conn: AsyncConnection, project: uuid.UUID) -> None:
    await conn.execute(delete(AuditEvent).where(where(project, 7)))


async def insert_forged(conn: AsyncConnection, project: uuid.UUID) -> None:
    row = (await conn.execute(select(AuditEvent.__table__).where(where(project, 7)))).one()
    forged = dict(row._mapping) | {"id": uuid.uuid4(), "seq": 8, "prev_hash": row.hash}
    await conn.execute(insert(AuditEvent).values(**(forged | {"hash": "f" * 64})))


async def remove_and_renumber(conn: AsyncConnection, project: uuid.UUID) -> None:
    await conn.execute(delete(AuditEvent).where(where(project, 3)))
    for seq in (4, 5, 6, 7):
        await conn.execute(update(AuditEvent).where(where(project, seq)).values(seq=seq - 1))


ATTACKS: dict[str, tuple[Tamper, int, str]] = {
    "changed": (change, 2, r"event #2 \(member.added at .*, id .*\) was changed after it"),
    "detail changed": (change_detail, 2, r"event #2 \(member.added .*\) was changed after it"),
    "removed": (remove, 4, r"event #3 was removed: the chain goes on at event #4 "),
    "last removed": (remove_last, 7, r"event #7 was removed from the end of the log"),
    "inserted": (insert_forged, 8, r"event #8 \(.*\) was inserted: the chain ended at #7"),
    "removed and renumbered": (
        remove_and_renumber,
        3,
        r"event #3 \(file.downloaded .*\) does not follow the event before it",
    ),
}


def tampered(live: LiveServer, project_id: str, attack: Tamper) -> None:
    """The attack made straight in the database (on PostgreSQL with the trigger off, as a
    superuser can; it is on again afterwards)."""
    postgres = live.state.engine.dialect.name == "postgresql"

    async def run() -> None:
        async with live.state.engine.begin() as conn:
            if postgres:
                await conn.execute(text(f"ALTER TABLE audit_events DISABLE TRIGGER {TRIGGER}"))
            await attack(conn, uuid.UUID(project_id))
            if postgres:
                await conn.execute(text(f"ALTER TABLE audit_events ENABLE TRIGGER {TRIGGER}"))

    live.call(run())


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_event_changed_removed_or_inserted_in_the_database_is_named(
    live: LiveServer, admin: Api, alice: Api, bob: Api, name: str
) -> None:
    attack, seq, said = ATTACKS[name]
    pid = alice.project("Ledger")["id"]
    added = alice.post(
        f"/projects/{pid}/members", json={"email": "bob@example.com", "role": "editor"}
    )
    assert added.status_code == 201
    file = alice.upload(pid, "sales.csv", SALES).json()
    assert bob.get(f"/files/{file['id']}/content").status_code == 200
    session = bob.post(f"/projects/{pid}/sessions", json={"title": "Q"}).json()
    assert bob.patch(f"/sessions/{session['id']}", json={"autonomy": "review"}).status_code == 200
    assert bob.patch(f"/sessions/{session['id']}", json={"title": "Q2"}).status_code == 200
    # The events, in order: the attacks count on them.
    actions = [e["action"] for e in reversed(alice.get(f"/projects/{pid}/audit").json()["items"])]
    assert actions == [
        "project.created",
        "member.added",
        "file.uploaded",
        "file.downloaded",
        "session.created",
        "session.autonomy_changed",
        "session.renamed",
    ]
    before = alice.get(f"/projects/{pid}/audit/verify").json()
    assert before["intact"] is True and before["events"] == 7, before
    assert before["sentence"] == f"intact: 7 events, last hash {before['head'][:16]}"
    # Only owners (and administrators) verify.
    refused = bob.get(f"/projects/{pid}/audit/verify")
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"

    tampered(live, pid, attack)
    for reader in (alice, admin):
        verdict = reader.get(f"/projects/{pid}/audit/verify").json()
        assert verdict["intact"] is False and verdict["seq"] == seq, verdict
        assert re.search(said, verdict["sentence"]), verdict["sentence"]

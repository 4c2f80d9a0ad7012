"""The audit log's hash chains: each project's events, in order, each carrying the hash of
the one before it, so that an event changed, removed or inserted afterwards shows (on every
backend; on PostgreSQL a trigger refuses UPDATE and DELETE besides).

An event's hash is the SHA-256 of the canonical JSON of every field of its row and the
hash before it. `link` numbers a new event and hashes it with the project's chain head
locked, so concurrent writers never fork a chain; `verify` walks a chain and names the
first event that does not hold.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import AuditChain, AuditEvent

# The hash before a chain's first event.
GENESIS = "0" * 64


def digest(event: AuditEvent, prev_hash: str) -> str:
    """The hash of an event's row (every field but its own hash) after `prev_hash`."""
    fields: dict[str, Any] = {
        "id": str(event.id),
        "project_id": str(event.project_id),
        "seq": event.seq,
        "at": event.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "actor_id": None if event.actor_id is None else str(event.actor_id),
        "actor_email": event.actor_email,
        "action": event.action,
        "subject_type": event.subject_type,
        "subject_id": event.subject_id,
        "summary": event.summary,
        "detail": event.detail,
        "prev_hash": prev_hash,
    }
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def lock_head(db: AsyncSession, project_id: uuid.UUID) -> tuple[int, str]:
    """The project's chain head (last number, last hash), locked until the transaction ends.

    The head's row is written first if missing (an upsert that changes nothing otherwise):
    on SQLite that write takes the database's write lock, which serialises writers; on
    PostgreSQL `FOR UPDATE` holds the row against every other writer of this chain.
    """
    dialect = postgresql if db.get_bind().dialect.name == "postgresql" else sqlite
    await db.execute(
        dialect.insert(AuditChain)
        .values(project_id=project_id, seq=0, head=GENESIS)
        .on_conflict_do_nothing(index_elements=["project_id"])
    )
    row = (
        await db.execute(
            select(AuditChain.seq, AuditChain.head)
            .where(AuditChain.project_id == project_id)
            .with_for_update()
        )
    ).one()
    return int(row.seq), str(row.head)


async def link(db: AsyncSession, event: AuditEvent) -> None:
    """Number and hash a new event after its project's chain head, and move the head (the
    caller adds the event in the same transaction)."""
    seq, head = await lock_head(db, event.project_id)
    event.seq, event.prev_hash = seq + 1, head
    event.hash = digest(event, head)
    await db.execute(
        update(AuditChain)
        .where(AuditChain.project_id == event.project_id)
        .values(seq=event.seq, head=event.hash)
    )


@dataclass(frozen=True)
class Verdict:
    """What a walk of a chain found: intact with so many events, or its first bad event."""

    events: int
    head: str = GENESIS  # the chain's last hash: kept elsewhere, it shows a rewritten chain
    problem: str | None = None  # one sentence naming the first event that does not hold
    seq: int | None = None  # its number in the chain
    event_id: uuid.UUID | None = None

    @property
    def intact(self) -> bool:
        return self.problem is None

    @property
    def sentence(self) -> str:
        return self.problem or f"intact: {self.events} events, last hash {self.head[:16]}"


def _named(event: AuditEvent) -> str:
    when = event.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"event #{event.seq} ({event.action} at {when}, id {event.id})"


def _problem(event: AuditEvent, expected: int, before: str, last: int) -> str | None:
    """What is wrong with the event found where event `expected` should be (None: nothing)."""
    if event.seq is None or event.hash is None or event.seq > last:
        return f"{_named(event)} was inserted: the chain ended at #{last}"
    if event.seq > expected:
        missing = f"#{expected}" + (f" to #{event.seq - 1}" if event.seq - 1 > expected else "")
        return f"event {missing} was removed: the chain goes on at {_named(event)}"
    if event.seq < expected:
        return f"{_named(event)} was inserted: its number is taken"
    if event.prev_hash != before:
        return (
            f"{_named(event)} does not follow the event before it: an event was removed or "
            "inserted there, or this one was altered"
        )
    if digest(event, event.prev_hash) != event.hash:
        return f"{_named(event)} was changed after it was recorded"
    return None


async def verify(db: AsyncSession, project_id: uuid.UUID) -> Verdict:
    """Walk the project's chain in order and check every link and hash against its head."""
    found = (
        await db.execute(
            select(AuditChain.seq, AuditChain.head).where(AuditChain.project_id == project_id)
        )
    ).one_or_none()
    last, top = (0, GENESIS) if found is None else (int(found.seq), str(found.head))
    query = (
        select(AuditEvent)
        .where(AuditEvent.project_id == project_id)
        .order_by(AuditEvent.seq, AuditEvent.id)
        .execution_options(yield_per=500)
    )
    expected, before = 1, GENESIS
    async for event in await db.stream_scalars(query):
        problem = _problem(event, expected, before, last)
        if problem:
            return Verdict(expected - 1, before, problem, event.seq, event.id)
        expected, before = expected + 1, event.hash
    count = expected - 1
    if last > count:
        gone = f"#{count + 1}" + (f" to #{last}" if last > count + 1 else "")
        problem = f"event {gone} was removed from the end of the log"
        return Verdict(count, before, problem, count + 1)
    if top != before:
        return Verdict(count, before, "the chain's head does not match its last event")
    return Verdict(count, before)

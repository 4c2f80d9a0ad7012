"""Selecting a question's knowledge (app/knowledge/selection.py) on SQLite and PostgreSQL:
what is chosen and in what order, and the per-process cache, which two replicas (two
selectors on one database) never serve stale after an edit, a deletion or a status change
made elsewhere; and the rule that says which given items a run used (usage.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, event, update
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from app.db import create_engine, session_factory
from app.knowledge.prompt import Given
from app.knowledge.selection import KnowledgeSelector
from app.knowledge.usage import used
from app.models import KnowledgeItem, Project, User
from app.models.base import Base, utcnow
from tests.support.services import create_postgres_database, drop_postgres_database


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    name = None
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'knowledge.db'}"
    else:
        url, name = await asyncio.to_thread(create_postgres_database)
    made = create_engine(url)
    async with made.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    yield made
    await made.dispose()
    if name:
        await asyncio.to_thread(drop_postgres_database, name)


async def project_of(factory: async_sessionmaker[Any]) -> uuid.UUID:
    async with factory() as db:
        user = User(email=f"{uuid.uuid4().hex[:8]}@example.com", password_hash="-")
        db.add(user)
        await db.flush()
        project = Project(owner_id=user.id, name="p")
        db.add(project)
        await db.commit()
        return project.id


async def item(
    factory: async_sessionmaker[Any],
    project_id: uuid.UUID,
    kind: str,
    title: str,
    body: str,
    **more: Any,
) -> uuid.UUID:
    async with factory() as db:
        row = KnowledgeItem(
            project_id=project_id, kind=kind, title=title, body=body, tokens=20, **more
        )
        db.add(row)
        await db.commit()
        return row.id


async def titles(
    selector: KnowledgeSelector,
    factory: async_sessionmaker[Any],
    project_id: uuid.UUID,
    question: str,
    budget: int = 1000,
    files: set[uuid.UUID] | None = None,
) -> list[str]:
    async with factory() as db:
        chosen = await selector.select(db, project_id, question, budget, files or set())
    return [i.title for i in chosen.shown]


async def test_rules_then_the_relevant_by_rank_and_nothing_else(engine: AsyncEngine) -> None:
    factory = session_factory(engine)
    pid = await project_of(factory)
    other = await project_of(factory)
    await item(factory, pid, "lesson", "Weather", "Sunny days sell ice cream.")
    await item(factory, pid, "definition", "Refund", "A refund is money given back.")
    await item(factory, pid, "definition", "Net refunds", "Net refunds: refunds minus refund fees.")
    await item(factory, pid, "rule", "Euros", "Money is in euros.")
    await item(factory, pid, "definition", "Churn", "Refunds", status="proposed")
    await item(factory, pid, "definition", "Rejected", "Refunds", status="rejected")
    await item(factory, other, "definition", "Theirs", "Refunds refunds refunds.")
    selector = KnowledgeSelector()
    shown = await titles(selector, factory, pid, "How many net refunds?")
    assert shown == ["Euros", "Net refunds", "Refund"]
    assert await titles(selector, factory, pid, "Anything else?") == ["Euros"]
    # The budget: the rule always; then what fits; the rest named.
    async with factory() as db:
        chosen = await selector.select(db, pid, "How many net refunds?", 30, set())
    assert [i.title for i in chosen.shown] == ["Euros"]
    assert chosen.not_shown == ["Net refunds", "Refund"]


async def test_an_item_of_a_deleted_file_is_left_out(engine: AsyncEngine) -> None:
    factory = session_factory(engine)
    pid = await project_of(factory)
    kept, gone = uuid.uuid4(), uuid.uuid4()
    await item(factory, pid, "column", "amount", "Cents.", file_id=kept, column_name="amount")
    await item(factory, pid, "column", "price", "Cents.", file_id=gone, column_name="price")
    await item(factory, pid, "rule", "Gone", "Of a gone file.", file_id=gone)
    shown = await titles(KnowledgeSelector(), factory, pid, "amount and price?", files={kept})
    assert shown == ["amount"]


async def test_replicas_see_every_change_made_elsewhere(engine: AsyncEngine) -> None:
    factory = session_factory(engine)
    pid = await project_of(factory)
    first = await item(factory, pid, "definition", "Refund", "Money given back.")
    one, two = KnowledgeSelector(), KnowledgeSelector()
    assert await titles(one, factory, pid, "refunds?") == ["Refund"]
    assert await titles(two, factory, pid, "refunds?") == ["Refund"]
    async with factory() as db:  # edited on "two"'s side
        await db.execute(
            update(KnowledgeItem)
            .where(KnowledgeItem.id == first)
            .values(title="Refund (gross)", updated_at=utcnow())
        )
        await db.commit()
    assert await titles(one, factory, pid, "refunds?") == ["Refund (gross)"]
    # One deleted and another written: the count is the same, the last change is not.
    async with factory() as db:
        await db.execute(delete(KnowledgeItem).where(KnowledgeItem.id == first))
        await db.commit()
    await item(factory, pid, "definition", "Refund fee", "Refund fees are kept.")
    assert await titles(one, factory, pid, "refunds?") == ["Refund fee"]
    async with factory() as db:  # rejected: no longer given
        await db.execute(update(KnowledgeItem).values(status="rejected", updated_at=utcnow()))
        await db.commit()
    assert await titles(one, factory, pid, "refunds?") == []
    assert await titles(two, factory, pid, "refunds?") == []


async def test_a_project_with_no_items_costs_one_query(engine: AsyncEngine) -> None:
    factory = session_factory(engine)
    pid = await project_of(factory)
    statements: list[str] = []
    listener = lambda *args: statements.append(str(args[2]))  # noqa: E731
    event.listen(engine.sync_engine, "before_cursor_execute", listener)
    try:
        assert await titles(KnowledgeSelector(), factory, pid, "revenue?") == []
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", listener)
    assert len(statements) == 1 and "count(*)" in statements[0]


def test_used_means_cited_or_its_identifier_in_the_code() -> None:
    net, amount, rule, phrase = (
        Given(uuid.uuid4(), "K1", "net_revenue", "net_revenue"),
        Given(uuid.uuid4(), "K2", "amount", "amount"),
        Given(uuid.uuid4(), "K3", "Euros", None),
        Given(uuid.uuid4(), "K12", "Active customer", None),
    )
    given = [net, amount, rule, phrase]

    def flags(answer: str, code: list[str]) -> list[object]:
        return [g["used"] for g in used(given, answer, code)]

    assert flags("Revenue is 3 (see [K3])", []) == [False, False, True, False]
    assert flags("K12 says so", ["df['amount'].sum()"]) == [False, True, False, True]
    # K1 is not K12; words in the answer alone (an echo of the question) do not count.
    assert flags("net_revenue and amount: K12", []) == [False, False, False, True]
    assert flags("", ["net_revenue = df.revenue * 0.81", "# amounts"]) == [
        True,
        False,
        False,
        False,
    ]

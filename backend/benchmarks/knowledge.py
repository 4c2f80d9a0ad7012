"""Knowledge selection benchmark: what choosing a question's knowledge items costs.

A project with 10,000 approved items (rules, definitions, column meanings of 200 files,
examples, lessons) and a project with none, in SQLite (the embedded database) and, with
--postgres, in PostgreSQL (127.0.0.1:5432, a database made and dropped for the run).
Prints, for each database:
- the first selection of the big project (its items read and indexed: the cold cache);
- p50 / p95 of selecting for varied questions once indexed (the version check included:
  one query a question), target p95 <= 10 ms, and of the ranking alone (no database);
- the same after an item is edited (the index built again, once);
- for the project with no items: the time, and the statements it ran (one, a count).

    make bench-knowledge   (ARGS="--items 10000 --questions 300 --postgres")
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import event, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import create_engine, session_factory
from app.knowledge.selection import KnowledgeSelector, choose
from app.models import KnowledgeItem, Project, User
from app.models.base import Base, utcnow
from tests.support.services import create_postgres_database, drop_postgres_database

TARGET_P95_MS = 10.0
BUDGET = 2000
TERMS = re.findall(
    r"\w+",
    "revenue net gross refund margin churn cohort active customer order region month quarter "
    "discount tax shipping invoice channel campaign retention basket sku price cost profit "
    "subscription trial conversion lead segment store warehouse return fiscal week",
)


# A team's vocabulary: its domain's words, then many rarer ones (column names, products,
# places), used with Zipf's frequencies as real text is.
VOCABULARY = [
    *TERMS,
    *(f"{a}{b}" for a in ("acct", "prod", "city", "col", "team") for b in range(600)),
]
WEIGHTS = [1 / rank for rank in range(1, len(VOCABULARY) + 1)]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(VOCABULARY, WEIGHTS, k=words))


async def seed(engine: AsyncEngine, items: int) -> tuple[uuid.UUID, uuid.UUID, list[uuid.UUID]]:
    """The big project, the empty one, and the big one's file ids."""
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    rng = random.Random(41)
    files = [uuid.uuid4() for _ in range(200)]
    factory = session_factory(engine)
    async with factory() as db:
        user = User(email=f"bench-{uuid.uuid4().hex[:8]}@example.com", password_hash="-")
        db.add(user)
        await db.flush()
        big = Project(owner_id=user.id, name="big")
        empty = Project(owner_id=user.id, name="empty")
        db.add_all([big, empty])
        await db.flush()
        kinds = ["definition", "column", "example", "lesson"]
        rows: list[dict[str, Any]] = []
        for n in range(items):
            kind = "rule" if n < 20 else kinds[n % 4]
            title = f"{_text(rng, 3)} {n}"
            body = _text(rng, rng.randint(10, 60))
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "project_id": big.id,
                    "kind": kind,
                    "title": title,
                    "body": body,
                    "status": "approved" if n % 10 else "proposed",
                    "file_id": files[n % 200] if kind == "column" else None,
                    "column_name": f"col_{n % 37}" if kind == "column" else None,
                    "flags": [],
                    "tokens": (len(title) + len(body)) // 4,
                    "created_at": utcnow(),
                    "updated_at": utcnow(),
                }
            )
        await db.execute(KnowledgeItem.__table__.insert(), rows)
        await db.commit()
        return big.id, empty.id, files


def _ms(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p50 = statistics.median(ordered) * 1000
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000
    return f"p50 {p50:.2f} ms, p95 {p95:.2f} ms"


async def bench(url: str, label: str, items: int, questions: int) -> bool:
    engine = create_engine(url)
    statements: list[str] = []
    event.listen(
        engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(str(a[2]))
    )
    try:
        big, empty, files = await seed(engine, items)
        factory = session_factory(engine)
        selector = KnowledgeSelector()
        rng = random.Random(7)
        in_play = set(files[:20])

        async def once(project: uuid.UUID, question: str) -> float:
            start = time.perf_counter()
            async with factory() as db:
                await selector.select(db, project, question, BUDGET, in_play, {files[0]})
            return time.perf_counter() - start

        cold = await once(big, "What was net revenue by region?")
        warm = [await once(big, f"What is the {_text(rng, 4)}?") for _ in range(questions)]
        index = selector.cached(big)
        assert index is not None
        ranking = []
        for _ in range(questions):
            start = time.perf_counter()
            choose(index, f"What is the {_text(rng, 4)}?", BUDGET, in_play, {files[0]}, set())
            ranking.append(time.perf_counter() - start)
        async with factory() as db:
            await db.execute(
                update(KnowledgeItem)
                .where(KnowledgeItem.project_id == big)
                .where(KnowledgeItem.kind == "lesson")
                .values(body="edited", updated_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            await db.commit()
        rebuilt = await once(big, "What was net revenue by region?")
        statements.clear()
        none = [await once(empty, "What was net revenue by region?") for _ in range(questions)]
        per_question = len(statements) / questions
        ok = sorted(warm)[max(0, int(len(warm) * 0.95) - 1)] * 1000 <= TARGET_P95_MS
        print(f"{label}: {items:,} items")
        print(f"  first selection (read and index): {cold * 1000:.1f} ms")
        print(f"  selecting, indexed: {_ms(warm)}  (target p95 <= {TARGET_P95_MS:.0f} ms)")
        print(f"  of which ranking alone, in process: {_ms(ranking)}")
        print(f"  first selection after an edit: {rebuilt * 1000:.1f} ms")
        print(f"  a project with no items: {_ms(none)}, {per_question:g} statement(s) each:")
        print(f"    {statements[0].split(chr(10))[0] if statements else '-'}")
        return ok
    finally:
        await engine.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--postgres", action="store_true", help="also on PostgreSQL")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'knowledge.db'}"
        ok = await bench(url, "SQLite", args.items, args.questions) and ok
    if args.postgres:
        made, name = await asyncio.to_thread(create_postgres_database)
        try:
            ok = await bench(made, "PostgreSQL", args.items, args.questions) and ok
        finally:
            await asyncio.to_thread(drop_postgres_database, name)
    print("p95 within target" if ok else "p95 OVER TARGET")


if __name__ == "__main__":
    asyncio.run(main())

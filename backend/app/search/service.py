"""Search: the query for the database in use, its hits' snippets made safe."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.search import postgres, sqlite
from app.search.highlight import safe_snippet
from app.search.schemas import SearchHit, SearchPage


async def search(
    db: AsyncSession,
    user_id: uuid.UUID,
    words: str,
    project_id: uuid.UUID | None,
    limit: int,
    offset: int,
) -> SearchPage:
    """The hits of `words` in what `user_id` can see (the projects they are a member of;
    only `project_id`'s when given), best first."""
    engine = postgres if db.get_bind().dialect.name == "postgresql" else sqlite
    rows, total = await engine.search(db, user_id, words, project_id, limit, offset)
    items = [SearchHit(**{**row, "snippet": safe_snippet(row["snippet"])}) for row in rows]
    return SearchPage(items=items, total=total)

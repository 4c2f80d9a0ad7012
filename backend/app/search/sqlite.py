"""Search on SQLite: the FTS5 table `search_index` (made by migration 4a2c1e7b9d30 and kept
current by its triggers), `snippet()` for the snippet, FTS5's rank for the order."""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy import Uuid, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.search.highlight import START, STOP

WORD = re.compile(r"\w+", re.UNICODE)


def match_expression(words: str) -> str | None:
    """The user's words as an FTS5 query that only ever means "all these words" (the last
    one as a prefix, for a word being typed): each quoted, so no word is read as syntax
    (`OR`, `NEAR`, a column filter). None when there is no word."""
    found = WORD.findall(words)
    if not found:
        return None
    quoted = [f'"{w}"' for w in found]
    quoted[-1] += "*"
    return " ".join(quoted)


async def search(
    db: AsyncSession,
    user_id: uuid.UUID,
    words: str,
    project_id: uuid.UUID | None,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], int]:
    """A page of hits, best first, and how many there are; `snippet` has START/STOP marks."""
    expression = match_expression(words)
    if expression is None:
        return [], 0
    project = " AND project_id = :project_id" if project_id is not None else ""
    # FTS5's snippet() and rank only work in a query on the FTS table alone: the matches
    # are found first (materialized), then joined to what says who may see them.
    statement = text(
        "WITH matched AS MATERIALIZED ("
        "SELECT kind, session_id, run_id, project_id, rank, "
        f"snippet(search_index, 5, char({ord(START)}), char({ord(STOP)}), ' … ', 24) AS snippet "
        f"FROM search_index WHERE search_index MATCH :match{project}) "
        "SELECT m.kind AS kind, m.session_id AS session_id, m.run_id AS run_id, "
        "m.project_id AS project_id, s.title AS title, m.snippet AS snippet, "
        "count(*) OVER () AS total "
        "FROM matched m "
        "JOIN sessions s ON s.id = m.session_id "
        "JOIN project_members pm ON pm.project_id = m.project_id AND pm.user_id = :user_id "
        "ORDER BY m.rank LIMIT :limit OFFSET :offset"
    ).bindparams(bindparam("user_id", type_=Uuid))
    params: dict[str, Any] = {
        "match": expression,
        "user_id": user_id,
        "limit": limit,
        "offset": offset,
    }
    if project_id is not None:
        statement = statement.bindparams(bindparam("project_id", type_=Uuid))
        params["project_id"] = project_id
    rows = (await db.execute(statement, params)).mappings().all()
    total = int(rows[0]["total"]) if rows else 0
    hits = []
    for row in rows:
        hit = dict(row)
        for key in ("session_id", "run_id", "project_id"):
            hit[key] = uuid.UUID(hit[key]) if hit[key] else None
        hits.append(hit)
    return hits, total

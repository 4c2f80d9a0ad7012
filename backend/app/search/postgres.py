"""Search on PostgreSQL: `websearch_to_tsquery` against `to_tsvector('english', …)` of each
searched column (the expressions the GIN indexes of migration 4a2c1e7b9d30 are on),
`ts_headline` for the snippet, `ts_rank` for the order."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Uuid, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.search.highlight import START, STOP

# Names and code are searched with their punctuation as spaces: PostgreSQL's parser reads
# `forecast-by-region.csv` or `df.groupby` as one token (a file, a host), which no word finds.
PUNCTUATION = "'._-/()[],=:'"


def words_of(expression: str) -> str:
    """What is searched of a column of code or names (the migration's indexes match it)."""
    return f"translate({expression}, {PUNCTUATION}, '{' ' * (len(PUNCTUATION) - 2)}')"


# Each kind of hit: (kind, the text shown, FROM … of its rows, run id, when, the text
# searched when not the one shown).
_BRANCHES = [
    ("session", "s.title", "sessions s", "NULL::uuid", "s.updated_at"),
    (
        "question",
        "r.query",
        "runs r JOIN sessions s ON s.id = r.session_id",
        "r.id",
        "r.created_at",
    ),
    (
        "answer",
        "coalesce(r.final_answer, '')",
        "runs r JOIN sessions s ON s.id = r.session_id",
        "r.id",
        "r.created_at",
    ),
    (
        "code",
        "coalesce(st.code, '')",
        "run_steps st JOIN runs r ON r.id = st.run_id JOIN sessions s ON s.id = r.session_id",
        "r.id",
        "r.created_at",
        words_of("coalesce(st.code, '')"),
    ),
    (
        "artifact",
        "a.name",
        "artifacts a JOIN sessions s ON s.id = a.session_id",
        "a.run_id",
        "a.created_at",
        words_of("a.name"),
    ),
]


def _branch(
    kind: str,
    body: str,
    rows: str,
    run_id: str,
    at: str,
    searched: str | None = None,
    *,
    in_project: bool,
) -> str:
    searched = searched or body
    project = " AND s.project_id = :project_id" if in_project else ""
    return (
        f"SELECT '{kind}' AS kind, s.id AS session_id, {run_id} AS run_id, "
        f"s.project_id AS project_id, s.title AS title, {body} AS body, {at} AS at "
        f"FROM {rows} JOIN project_members pm ON pm.project_id = s.project_id "
        f"AND pm.user_id = :user_id "
        f"WHERE to_tsvector('english'::regconfig, {searched}) @@ (SELECT tsq FROM q){project}"
    )


HEADLINE = (
    f"'StartSel=' || chr({ord(START)}) || ', StopSel=' || chr({ord(STOP)}) || "
    "', MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=\" … \"'"
)


async def search(
    db: AsyncSession,
    user_id: uuid.UUID,
    words: str,
    project_id: uuid.UUID | None,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], int]:
    """A page of hits, best first, and how many there are; `snippet` has START/STOP marks."""
    union = " UNION ALL ".join(_branch(*b, in_project=project_id is not None) for b in _BRANCHES)
    statement = text(
        "WITH q AS (SELECT websearch_to_tsquery('english'::regconfig, :words) AS tsq), "
        f"hits AS ({union}) "
        "SELECT h.kind, h.session_id, h.run_id, h.project_id, h.title, "
        f"ts_headline('english'::regconfig, h.body, (SELECT tsq FROM q), {HEADLINE}) AS snippet, "
        "count(*) OVER () AS total "
        "FROM hits h "
        "ORDER BY ts_rank(to_tsvector('english'::regconfig, h.body), (SELECT tsq FROM q)) DESC, "
        "h.at DESC LIMIT :limit OFFSET :offset"
    ).bindparams(bindparam("user_id", type_=Uuid))
    params: dict[str, Any] = {"words": words, "user_id": user_id, "limit": limit, "offset": offset}
    if project_id is not None:
        statement = statement.bindparams(bindparam("project_id", type_=Uuid))
        params["project_id"] = project_id
    rows = (await db.execute(statement, params)).mappings().all()
    total = int(rows[0]["total"]) if rows else 0
    return [dict(r) for r in rows], total

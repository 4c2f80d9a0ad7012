"""A session's tree of branches, from its root: one statement per level, bounded."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.branches.lineage import MAX_DEPTH
from app.branches.schemas import SessionTree, TreeNode
from app.models import Run, Session
from app.runs.repository import usage
from app.sessions.schemas import SessionOut

MAX_NODES = 500
QUERY_CHARS = 200


async def root_of(db: AsyncSession, session: Session) -> Session:
    """The root of the tree `session` belongs to (itself for a root)."""
    current = session
    for _ in range(MAX_DEPTH):
        if current.parent_session_id is None:
            break
        parent = await db.get(Session, current.parent_session_id)
        if parent is None:
            break
        current = parent
    return current


async def tree_of(db: AsyncSession, session: Session) -> SessionTree:
    """The tree `session` belongs to, from its root (children oldest first)."""
    root = await root_of(db, session)
    nodes: dict[uuid.UUID, TreeNode] = {}
    sessions: dict[uuid.UUID, Session] = {root.id: root}
    after: dict[uuid.UUID, str | None] = {root.id: None}
    if root.branched_after_run_id is not None:  # a branch whose parent was deleted
        after_id = root.branched_after_run_id
        after[root.id] = await db.scalar(select(Run.query).where(Run.id == after_id))
    children: dict[uuid.UUID, list[uuid.UUID]] = {}
    level, truncated = [root.id], False
    for _ in range(MAX_DEPTH):
        if not level:
            break
        room = MAX_NODES - len(sessions)
        rows = (
            await db.execute(
                select(Session, Run.query)
                .outerjoin(Run, Run.id == Session.branched_after_run_id)
                .where(Session.parent_session_id.in_(level))
                .order_by(Session.created_at, Session.id)
                .limit(room + 1)
            )
        ).all()
        if len(rows) > room:
            rows, truncated = rows[:room], True
        level = []
        for child, asked in rows:
            sessions[child.id] = child
            after[child.id] = asked
            children.setdefault(child.parent_session_id, []).append(child.id)  # type: ignore[arg-type]
            level.append(child.id)
        if truncated:
            break
    else:
        truncated = bool(level)
    spent = await usage.by_session(db, sessions)
    for session_id, row in sessions.items():
        query = after[session_id]
        nodes[session_id] = TreeNode(
            session=SessionOut.of(row, spent.get(session_id)),
            branched_after_run_id=row.branched_after_run_id,
            after_query=query[:QUERY_CHARS] if query is not None else None,
        )
    for parent_id, ids in children.items():
        nodes[parent_id].children = [nodes[i] for i in ids]
    top = nodes[root.id]
    return SessionTree(**{**dict(top), "children": top.children}, truncated=truncated)

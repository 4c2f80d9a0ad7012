"""Deleting a session that has branches: its subtree, or its branches kept.

A kept branch keeps its past. Its inherited runs are rows of the parent, which goes, so the
parent's runs up to where the branch continues are *copied into the branch* (rows, steps,
files read, events, comments, and the artifacts' stored bytes) rather than the parent kept hidden:
a copy leaves no session that exists only to be read through others, and each kept branch
stands alone afterwards (deleting it later frees exactly its own bytes). The copies become
the branch's own runs; a branch of the branch that continued after one of them is pointed
at its copy. The branch is then attached to the deleted session's parent (a root when the
deleted session was one): its past before those runs still comes from there.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.branches import restore
from app.branches.lineage import MAX_DEPTH
from app.infra.storage import ObjectStorage
from app.models import Artifact, Comment, Run, RunEventRow, RunFileRead, RunStep, Session


async def subtree(db: AsyncSession, session: Session) -> list[uuid.UUID]:
    """The ids of the session's branches, their branches and so on (one statement a level)."""
    found: list[uuid.UUID] = []
    level = [session.id]
    for _ in range(MAX_DEPTH):
        level = list(
            await db.scalars(select(Session.id).where(Session.parent_session_id.in_(level)))
        )
        if not level:
            break
        found.extend(level)
    return found


async def keep_branches(db: AsyncSession, storage: ObjectStorage, parent: Session) -> int:
    """Make the parent's branches stand without it (see module); how many there were."""
    children = list(await db.scalars(select(Session).where(Session.parent_session_id == parent.id)))
    for child in children:
        after_id = child.branched_after_run_id
        after = await db.get(Run, after_id) if after_id is not None else None
        if after is not None and after.session_id == parent.id:
            copies = await _copy_runs(db, storage, parent, after, child)
            child.branched_after_run_id = parent.branched_after_run_id
            if child.restored is None:  # its first run settles its state from the copies
                child.restored = dict(restore.UNSETTLED)
            for branch_id in await subtree(db, child):
                branch = await db.get(Session, branch_id)
                if branch is not None and branch.branched_after_run_id in copies:
                    branch.branched_after_run_id = copies[branch.branched_after_run_id]
        child.parent_session_id = parent.parent_session_id
    await db.flush()
    return len(children)


def _columns(row: Any, leave: set[str]) -> dict[str, Any]:
    return {c.key: getattr(row, c.key) for c in row.__mapper__.column_attrs if c.key not in leave}


async def _copy_runs(
    db: AsyncSession, storage: ObjectStorage, parent: Session, until: Run, child: Session
) -> dict[uuid.UUID, uuid.UUID]:
    """Copy the parent's own runs up to `until` into `child`; old id → copy's id."""
    runs = list(
        await db.scalars(
            select(Run)
            .where(Run.session_id == parent.id, Run.created_at <= until.created_at)
            .order_by(Run.created_at, Run.id)
        )
    )
    copies: dict[uuid.UUID, uuid.UUID] = {}
    for run in runs:
        copy = Run(id=uuid.uuid4(), session_id=child.id, **_columns(run, {"id", "session_id"}))
        db.add(copy)
        copies[run.id] = copy.id
    await db.flush()
    for run in runs:
        new_id = copies[run.id]
        for step in run.steps:
            db.add(RunStep(id=uuid.uuid4(), run_id=new_id, **_columns(step, {"id", "run_id"})))
        for read in run.reads:
            db.add(RunFileRead(run_id=new_id, file_id=read.file_id, version=read.version))
        artifacts = {}
        for artifact in run.artifacts:
            key = f"sessions/{child.id}/artifacts/{uuid.uuid4().hex}"
            await storage.put(key, storage.iter_bytes(artifact.storage_key), artifact.mime)
            fields = _columns(artifact, {"id", "run_id", "session_id", "storage_key"})
            moved = Artifact(
                id=uuid.uuid4(), run_id=new_id, session_id=child.id, storage_key=key, **fields
            )
            db.add(moved)
            artifacts[str(artifact.id)] = str(moved.id)
        await _copy_comments(db, run.id, new_id)
        events = await db.scalars(select(RunEventRow).where(RunEventRow.run_id == run.id))
        for event in events:
            data = _renamed(event.data, str(run.id), str(new_id), artifacts, child.id)
            db.add(
                RunEventRow(
                    run_id=new_id,
                    seq=event.seq,
                    event=event.event,
                    data=data,
                    created_at=event.created_at,
                )
            )
    await db.flush()
    return copies


async def _copy_comments(db: AsyncSession, old_run: uuid.UUID, new_run: uuid.UUID) -> None:
    """The run's comments and replies, on the copy (replies answer the copied comment)."""
    comments = await db.scalars(
        select(Comment).where(Comment.run_id == old_run).order_by(Comment.created_at, Comment.id)
    )
    ids: dict[uuid.UUID, uuid.UUID] = {}
    for comment in list(comments):
        ids[comment.id] = uuid.uuid4()
        reply_to = ids.get(comment.reply_to) if comment.reply_to is not None else None
        fields = _columns(comment, {"id", "run_id", "reply_to"})
        db.add(Comment(id=ids[comment.id], run_id=new_run, reply_to=reply_to, **fields))
    await db.flush()


def _renamed(
    data: dict[str, Any],
    old_run: str,
    new_run: str,
    artifacts: dict[str, str],
    session_id: uuid.UUID,
) -> dict[str, Any]:
    """An event's data with the copy's run, session and artifact ids."""
    out = dict(data)
    if out.get("run_id") == old_run:
        out["run_id"] = new_run
    if "session_id" in out:
        out["session_id"] = str(session_id)
    artifact = out.get("artifact")
    if isinstance(artifact, dict):
        artifact = dict(artifact)
        artifact["id"] = artifacts.get(str(artifact.get("id")), artifact.get("id"))
        artifact["run_id"] = new_run
        artifact["session_id"] = str(session_id)
        out["artifact"] = artifact
    return out

"""What runs have spent, summed by session and by project (the API shows it; budgets bound
it), and the queries a run has run (its question's budget of `sql()` bounds them)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Project, Run, RunStep, Session
from app.runs.budget import Usage


def _sums() -> tuple[Any, ...]:
    return (
        func.coalesce(func.sum(Run.tokens_in), 0),
        func.coalesce(func.sum(Run.tokens_out), 0),
        func.sum(Run.cost_usd),
    )


async def by_session(db: AsyncSession, session_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Usage]:
    """The totals of each session's runs (sessions without runs are absent)."""
    ids = list(session_ids)
    if not ids:
        return {}
    rows = await db.execute(
        select(Run.session_id, *_sums()).where(Run.session_id.in_(ids)).group_by(Run.session_id)
    )
    return {row[0]: Usage(int(row[1]), int(row[2]), row[3]) for row in rows}


async def by_project(db: AsyncSession, project_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Usage]:
    """The totals of all runs in each project's sessions (projects without runs are absent)."""
    ids = list(project_ids)
    if not ids:
        return {}
    rows = await db.execute(
        select(Session.project_id, *_sums())
        .join(Run, Run.session_id == Session.id)
        .where(Session.project_id.in_(ids))
        .group_by(Session.project_id)
    )
    return {row[0]: Usage(int(row[1]), int(row[2]), row[3]) for row in rows}


async def by_asker(db: AsyncSession, project_id: uuid.UUID) -> dict[uuid.UUID, tuple[Usage, int]]:
    """What each member's questions in the project have spent, and how many they asked
    (members who asked nothing are absent)."""
    rows = await db.execute(
        select(Run.user_id, *_sums(), func.count(Run.id))
        .join(Session, Session.id == Run.session_id)
        .where(Session.project_id == project_id, Run.user_id.is_not(None))
        .group_by(Run.user_id)
    )
    return {row[0]: (Usage(int(row[1]), int(row[2]), row[3]), int(row[4])) for row in rows}


async def of_project(db: AsyncSession, project_id: uuid.UUID) -> Usage:
    return (await by_project(db, [project_id])).get(project_id, Usage())


async def toward_budget(db: AsyncSession, project: Project) -> Usage:
    """What the project's runs have spent, as far as its budget needs it: a project with no
    budget is not summed (nothing bounds it; a question costs one statement less)."""
    if project.budget_usd is None and project.budget_tokens is None:
        return Usage()
    return await of_project(db, project.id)


async def of_session(db: AsyncSession, session_id: uuid.UUID) -> Usage:
    return (await by_session(db, [session_id])).get(session_id, Usage())


async def queries_run(db: AsyncSession, run_id: uuid.UUID) -> int:
    """The `sql()` queries a run's code has run so far, in every step kept (a run that waited
    for the user goes on with what is left of its question's budget, on any replica)."""
    kept = await db.scalars(select(RunStep.queries).where(RunStep.run_id == run_id))
    return sum(len(queries or []) for queries in kept)

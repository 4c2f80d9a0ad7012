"""Everything a user owns hangs off their projects: one lookup rule for every resource."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Project, User

T = TypeVar("T")


async def one_owned(db: AsyncSession, user: User, query: Select[T], missing: Exception) -> T:
    """The row `query` finds if its project is the user's; `missing` otherwise.

    Another user's id answers exactly like an id that does not exist.

    Args:
        db: The request's session.
        user: Who asks.
        query: A select of one row by id, joined through to Project.
        missing: The error to raise when there is no such row for this user (one the API
            answers with 404).
    """
    found = (await db.scalars(query.where(Project.owner_id == user.id))).one_or_none()
    if found is None:
        raise missing
    return found

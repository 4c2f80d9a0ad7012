"""Everything in the workbench hangs off projects, and a project's members have roles: one
lookup rule for every resource.

    viewer   reads everything in the project, changes nothing
    editor   also uploads, asks, reviews, edits and deletes, but not members, budgets,
             sources' credentials or the project itself
    owner    everything

A user who is not a member gets exactly what an id that does not exist gets (404); a
member whose role is short of what the request needs gets 403 `forbidden_role`.
"""

from __future__ import annotations

import uuid
from enum import IntEnum
from typing import Any, Literal, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden
from app.models import Project, ProjectMember, Session, User

T = TypeVar("T")


# A role as the API writes it.
RoleName = Literal["viewer", "editor", "owner"]


class Role(IntEnum):
    """A member's role, ordered: each can do what the ones below it can."""

    viewer = 1
    editor = 2
    owner = 3

    @classmethod
    def of(cls, name: str) -> Role:
        return cls[name]


WHAT = {
    Role.viewer: "read it",
    Role.editor: "change it",
    Role.owner: "do this (owners only: members, budgets, sources' credentials, deleting it)",
}


class ForbiddenRole(Forbidden):
    """A member whose role is short of what the request needs."""

    code = "forbidden_role"

    def __init__(self, role: Role, need: Role) -> None:
        super().__init__(
            f"You are {_a(role)} of this project: {_a(need)} can {WHAT[need]}. "
            "Ask one of its owners for that role.",
            code="forbidden_role",
        )
        self.role, self.need = role, need


def _a(role: Role) -> str:
    return f"an {role.name}" if role.name[0] in "aeiou" else f"a {role.name}"


def require(role: Role, need: Role) -> None:
    """Raise ForbiddenRole unless `role` can do what `need` can."""
    if role < need:
        raise ForbiddenRole(role, need)


async def one_visible(
    db: AsyncSession, user: User, query: Select[Any], missing: Exception, need: Role
) -> Any:
    """The row `query` finds if the user is a member of its project with at least `need`.

    Args:
        db: The request's session.
        user: Who asks.
        query: A select of one row by id, joined through to Project.
        missing: Raised when there is no such row, or its project is not the user's (one
            the API answers with 404: another project's ids look like ids that do not exist).
        need: The least role the request needs.

    Raises:
        The `missing` error, or ForbiddenRole.
    """
    found = (
        await db.execute(
            query.add_columns(ProjectMember.role).join(
                ProjectMember,
                (ProjectMember.project_id == Project.id) & (ProjectMember.user_id == user.id),
            )
        )
    ).one_or_none()
    if found is None:
        raise missing
    require(Role.of(found[-1]), need)
    return found[0]


async def role_in(db: AsyncSession, user: User, project_id: uuid.UUID) -> Role | None:
    """The user's role in a project (None: not a member)."""
    name = await db.scalar(
        select(ProjectMember.role).where(
            ProjectMember.project_id == project_id, ProjectMember.user_id == user.id
        )
    )
    return Role.of(name) if name else None


async def still_reads_session(db: AsyncSession, user_id: uuid.UUID, session_id: uuid.UUID) -> bool:
    """Whether the user, enabled, is still a member of the session's project (a stream that
    follows a run asks it now and then: removing a member or disabling a user ends what they
    were following)."""
    found = await db.scalar(
        select(ProjectMember.user_id)
        .join(Session, Session.project_id == ProjectMember.project_id)
        .join(User, User.id == ProjectMember.user_id)
        .where(
            Session.id == session_id,
            ProjectMember.user_id == user_id,
            User.disabled_at.is_(None),
        )
    )
    return found is not None

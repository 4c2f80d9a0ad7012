"""What the branch routes take and give (API.md, "Branches")."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, Field

from app.sessions.schemas import SessionOut


class BranchCreate(BaseModel):
    after_run_id: uuid.UUID = Field(
        description="The run of the session's history (its own or inherited) to continue after"
    )


class TreeNode(BaseModel):
    session: SessionOut
    branched_after_run_id: uuid.UUID | None = Field(
        None, description="The run its parent's history continues after (null for the root)"
    )
    after_query: str | None = Field(
        None, description="That run's question (or cell's code), cut to 200 characters"
    )
    children: list[TreeNode] = Field(default_factory=list, description="Oldest first")


class SessionTree(TreeNode):
    """The whole tree the session belongs to, from its root."""

    truncated: bool = Field(
        False, description="The tree is larger or deeper than one answer shows (500, 50)"
    )

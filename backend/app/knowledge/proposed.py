"""A proposed knowledge item as the `knowledge.proposed` event carries it: the API's `item`
(API.md, "Project knowledge and checks"), with the screening's `flags`."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from app.models import KnowledgeItem


class AppliesTo(BaseModel):
    file_id: uuid.UUID | None = None
    source_id: uuid.UUID | None = None
    table: str | None = None
    column: str | None = None


class ProposedItem(BaseModel):
    id: uuid.UUID
    project_id: uuid.UUID
    kind: str
    title: str
    body: str
    applies_to: AppliesTo | None = Field(None, description="None: the whole project")
    status: str
    source_run_id: uuid.UUID | None
    created_by: uuid.UUID | None
    approved_by: uuid.UUID | None
    approved_at: datetime | None
    created_at: datetime
    flags: list[str] = Field(
        default_factory=list,
        description='What screening found: "instructions" (it reads like an instruction to '
        "the agent; never approved without a person reading it)",
    )

    @classmethod
    def of(cls, item: KnowledgeItem) -> ProposedItem:
        scoped = item.file_id or item.source_id or item.table_name or item.column_name
        return cls(
            id=item.id,
            project_id=item.project_id,
            kind=item.kind,
            title=item.title,
            body=item.body,
            applies_to=AppliesTo(
                file_id=item.file_id,
                source_id=item.source_id,
                table=item.table_name,
                column=item.column_name,
            )
            if scoped
            else None,
            status=item.status,
            source_run_id=item.source_run_id,
            created_by=item.created_by,
            approved_by=item.approved_by,
            approved_at=item.approved_at,
            created_at=item.created_at,
            flags=list(item.flags or []),
        )

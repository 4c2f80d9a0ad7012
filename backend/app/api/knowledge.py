"""Project knowledge (API.md, "Project knowledge and checks"): the items a project's team
writes, reviews and keeps, each change in the audit log."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response, status
from pydantic import AfterValidator
from sqlalchemy.ext.asyncio import AsyncSession

from app import audit
from app.api.deps import CurrentUser, DbDep, NeededRole, OwnedProject, PageDep, SettingsDep
from app.audit import Action
from app.knowledge import examples, service
from app.knowledge.schemas import (
    KnowledgeCreate,
    KnowledgeOut,
    KnowledgePage,
    KnowledgeUpdate,
    refuse_control_characters,
)
from app.models import KnowledgeItem, Run, User
from app.models.knowledge import KnowledgeKind, KnowledgeStatus
from app.runs.repository import history

router = APIRouter(tags=["knowledge"])


async def owned_item(
    item_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> KnowledgeItem:
    return await service.get_owned(db, user, item_id, need)


async def owned_run(run_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole) -> Run:
    return await history.get_owned_run(db, user, run_id, need)


# Any member reads a project's knowledge; an editor writes, approves, rejects and deletes.
OwnedItem = Annotated[KnowledgeItem, Depends(owned_item)]


def _about(item: KnowledgeItem, **more: Any) -> dict[str, Any]:
    return {"item_id": str(item.id), "kind": item.kind, "title": item.title, **more}


async def record(
    db: AsyncSession, user: User, action: Action, item: KnowledgeItem, **more: Any
) -> None:
    """Log a change of `item` (knowledge.created, updated, approved, rejected, deleted)."""
    await audit.record(
        db, item.project_id, user, action, ("knowledge", item.id), _about(item, **more)
    )


async def one_out(db: AsyncSession, item: KnowledgeItem) -> KnowledgeOut:
    (shown,) = await service.out(db, [item])
    return shown


@router.post(
    "/projects/{project_id}/knowledge",
    response_model=KnowledgeOut,
    status_code=status.HTTP_201_CREATED,
)
async def create_item(
    body: KnowledgeCreate,
    project: OwnedProject,
    db: DbDep,
    settings: SettingsDep,
    user: CurrentUser,
) -> KnowledgeOut:
    """Add an item a person wrote: it is approved (by them) at once."""
    item = await service.create(db, project, user, body, settings)
    await record(db, user, Action.knowledge_created, item)
    return await one_out(db, item)


@router.get("/projects/{project_id}/knowledge", response_model=KnowledgePage)
async def list_items(
    project: OwnedProject,
    db: DbDep,
    page: PageDep,
    kind: KnowledgeKind | None = None,
    status: KnowledgeStatus | None = None,
    q: Annotated[
        str | None,
        Query(max_length=200, description="Found in the title or body, any case"),
        AfterValidator(refuse_control_characters),
    ] = None,
) -> KnowledgePage:
    """The project's items, newest first, a page at a time (`limit`, `offset`)."""
    items, total = await service.list_for_project(
        db, project.id, kind=kind, status=status, q=q, limit=page.limit, offset=page.offset
    )
    return KnowledgePage(items=await service.out(db, items), total=total)


@router.get("/knowledge/{item_id}", response_model=KnowledgeOut)
async def get_item(item: OwnedItem, db: DbDep) -> KnowledgeOut:
    return await one_out(db, item)


_STATUS_ACTIONS = {
    KnowledgeStatus.approved: Action.knowledge_approved,
    KnowledgeStatus.rejected: Action.knowledge_rejected,
}


@router.patch("/knowledge/{item_id}", response_model=KnowledgeOut)
async def update_item(
    body: KnowledgeUpdate, item: OwnedItem, db: DbDep, settings: SettingsDep, user: CurrentUser
) -> KnowledgeOut:
    """Edit an item, or approve or reject it (approving records who and when)."""
    changed = await service.update(db, item, user, body, settings)
    edits = [field for field in changed if field != "status"]
    if edits:
        await record(db, user, Action.knowledge_updated, item, fields=edits)
    if "status" in changed:
        await record(db, user, _STATUS_ACTIONS[KnowledgeStatus(item.status)], item)
    return await one_out(db, item)


@router.delete("/knowledge/{item_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_item(item: OwnedItem, db: DbDep, user: CurrentUser) -> Response:
    await record(db, user, Action.knowledge_deleted, item)
    await service.delete(db, item)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/runs/{run_id}/verify",
    response_model=KnowledgeOut,
    status_code=status.HTTP_201_CREATED,
    responses={409: {"description": "The run did not succeed, or is saved already"}},
)
async def verify_run(
    run: Annotated[Run, Depends(owned_run)],
    db: DbDep,
    settings: SettingsDep,
    user: CurrentUser,
) -> KnowledgeOut:
    """Save a succeeded run as a verified `example` item (its question, the code and SQL
    that worked, and its answer), approved by the caller."""
    item = await examples.verify(db, user, run, settings)
    await record(db, user, Action.knowledge_created, item, run_id=str(run.id))
    return await one_out(db, item)

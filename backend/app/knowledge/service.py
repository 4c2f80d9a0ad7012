"""Knowledge items of a project: create, read, change and delete them, and hand the
approved ones to the agent's prompt. Every statement on knowledge_items lives here and in
app.knowledge.targets and app.sources.dictionary; nothing here commits (the request does)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config.knowledge import KnowledgeSettings
from app.db import paginate
from app.errors import NotFound, PayloadTooLarge, Unprocessable
from app.knowledge import targets
from app.knowledge.schemas import (
    AppliesTo,
    KnowledgeCreate,
    KnowledgeOut,
    KnowledgeUpdate,
    refuse_control_characters,
)
from app.models import KnowledgeItem, Project, User
from app.models.base import utcnow
from app.models.knowledge import KnowledgeKind, KnowledgeStatus
from app.ownership import Role, one_visible

# About four characters a token: the estimate stored with each item.
CHARS_PER_TOKEN = 4


def estimate_tokens(title: str, body: str) -> int:
    return (len(title) + len(body) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


async def get_owned(
    db: AsyncSession, user: User, item_id: uuid.UUID, need: Role = Role.viewer
) -> KnowledgeItem:
    query = (
        select(KnowledgeItem)
        .join(Project, Project.id == KnowledgeItem.project_id)
        .where(KnowledgeItem.id == item_id)
    )
    missing = NotFound("No such knowledge item.", code="knowledge_not_found")
    item: KnowledgeItem = await one_visible(db, user, query, missing, need)
    return item


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def list_for_project(
    db: AsyncSession,
    project_id: uuid.UUID,
    *,
    kind: str | None = None,
    status: str | None = None,
    q: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[KnowledgeItem], int]:
    """A page of the project's items, newest first; `q` is found in the title or body
    whatever its case."""
    query = select(KnowledgeItem).where(KnowledgeItem.project_id == project_id)
    if kind:
        query = query.where(KnowledgeItem.kind == kind)
    if status:
        query = query.where(KnowledgeItem.status == status)
    if q:
        pattern = f"%{_escaped(q.lower())}%"
        query = query.where(
            or_(
                func.lower(KnowledgeItem.title).like(pattern, escape="\\"),
                func.lower(KnowledgeItem.body).like(pattern, escape="\\"),
            )
        )
    query = query.order_by(KnowledgeItem.created_at.desc(), KnowledgeItem.id)
    return await paginate(db, query, limit, offset)


async def approved_for_prompt(db: AsyncSession, project_id: uuid.UUID) -> list[KnowledgeItem]:
    """The project's approved items (what the agent may be given), oldest first."""
    query = select(KnowledgeItem).where(
        KnowledgeItem.project_id == project_id,
        KnowledgeItem.status == KnowledgeStatus.approved,
    )
    return list(await db.scalars(query.order_by(KnowledgeItem.created_at, KnowledgeItem.id)))


def bounded(body: str, limits: KnowledgeSettings) -> None:
    """Refuse (422) a body longer than KNOWLEDGE_ITEM_MAX_CHARS."""
    if len(body) > limits.KNOWLEDGE_ITEM_MAX_CHARS:
        raise Unprocessable(
            f"A knowledge item's body may be at most {limits.KNOWLEDGE_ITEM_MAX_CHARS:,} "
            f"characters; this one has {len(body):,}. Shorten it or split it in two.",
            code="knowledge_too_long",
        )


async def _room(db: AsyncSession, project_id: uuid.UUID, limits: KnowledgeSettings) -> None:
    count = await db.scalar(
        select(func.count())
        .select_from(KnowledgeItem)
        .where(KnowledgeItem.project_id == project_id)
    )
    if (count or 0) >= limits.KNOWLEDGE_MAX_ITEMS:
        raise PayloadTooLarge(
            f"This project keeps {count:,} knowledge items, the most it may "
            f"(KNOWLEDGE_MAX_ITEMS); delete some before adding more.",
            code="knowledge_full",
        )


def _place(item: KnowledgeItem, target: AppliesTo | None) -> None:
    target = target or AppliesTo()
    item.file_id, item.source_id = target.file_id, target.source_id
    item.table_name, item.column_name = target.table, target.column


async def _new(
    db: AsyncSession,
    project: Project,
    *,
    kind: str,
    title: str,
    body: str,
    applies_to: AppliesTo | None,
    limits: KnowledgeSettings,
    status: KnowledgeStatus,
    user: User | None,
    source_run_id: uuid.UUID | None = None,
    flags: Sequence[str] = (),
) -> KnowledgeItem:
    bounded(body, limits)
    await _room(db, project.id, limits)
    target = await targets.checked(db, project, applies_to) if applies_to else None
    now = utcnow()
    approved = status == KnowledgeStatus.approved and user is not None
    item = KnowledgeItem(
        id=uuid.uuid4(),
        project_id=project.id,
        kind=KnowledgeKind(kind).value,
        title=title.strip(),
        body=body.strip(),
        status=status.value,
        source_run_id=source_run_id,
        created_by=user.id if user else None,
        approved_by=user.id if approved and user else None,
        approved_at=now if approved else None,
        flags=list(flags),
        tokens=estimate_tokens(title, body),
        created_at=now,
        updated_at=now,
    )
    _place(item, target)
    db.add(item)
    await db.flush()
    return item


async def create(
    db: AsyncSession,
    project: Project,
    user: User,
    data: KnowledgeCreate,
    limits: KnowledgeSettings,
    *,
    source_run_id: uuid.UUID | None = None,
) -> KnowledgeItem:
    """An item a person wrote: approved by them at once."""
    return await _new(
        db,
        project,
        kind=data.kind,
        title=data.title,
        body=data.body,
        applies_to=data.applies_to,
        limits=limits,
        status=KnowledgeStatus.approved,
        user=user,
        source_run_id=source_run_id,
    )


async def create_approved(
    db: AsyncSession,
    project: Project,
    user: User | None,
    *,
    kind: KnowledgeKind,
    title: str,
    body: str,
    applies_to: AppliesTo | None,
    limits: KnowledgeSettings,
    source_run_id: uuid.UUID | None = None,
) -> KnowledgeItem:
    """An item a person wrote (a data dictionary's description, a verified run)."""
    return await _new(
        db,
        project,
        kind=kind,
        title=title,
        body=body,
        applies_to=applies_to,
        limits=limits,
        status=KnowledgeStatus.approved,
        user=user,
        source_run_id=source_run_id,
    )


def rewrite(item: KnowledgeItem, body: str, user: User | None) -> None:
    """A person's new text of an item: it is theirs, approved."""
    item.body = body
    if item.status != KnowledgeStatus.approved or item.approved_by is None:
        item.approved_by = user.id if user else None
        item.approved_at = utcnow()
    item.status = KnowledgeStatus.approved
    item.tokens = estimate_tokens(item.title, body)
    item.updated_at = utcnow()


async def create_example(
    db: AsyncSession,
    project: Project,
    user: User,
    *,
    title: str,
    body: str,
    source_run_id: uuid.UUID,
    limits: KnowledgeSettings,
) -> KnowledgeItem:
    """A run a person verified, saved as an approved `example` item."""
    return await create_approved(
        db,
        project,
        user,
        kind=KnowledgeKind.example,
        title=title,
        body=body,
        applies_to=None,
        limits=limits,
        source_run_id=source_run_id,
    )


async def create_proposed(
    db: AsyncSession,
    project: Project,
    kind: str,
    title: str,
    body: str,
    applies_to: AppliesTo | None,
    source_run_id: uuid.UUID | None,
    flags: Sequence[str] = (),
    limits: KnowledgeSettings | None = None,
) -> KnowledgeItem:
    """An item the workbench proposes (the review pass): status proposed, written by no one,
    reaching no prompt until a person approves it.

    Raises:
        Unprocessable: a title, body or target that is refused (the caller may skip it).
        PayloadTooLarge: the project keeps as many items as it may.
    """
    title = title.strip()[:200]
    for text in (title, body):
        try:
            refuse_control_characters(text)
        except ValueError as exc:
            raise Unprocessable(f"The item {exc}.", code="knowledge_invalid") from None
    return await _new(
        db,
        project,
        kind=kind,
        title=title,
        body=body,
        applies_to=applies_to,
        limits=limits or KnowledgeSettings(),
        status=KnowledgeStatus.proposed,
        user=None,
        source_run_id=source_run_id,
        flags=flags,
    )


async def update(
    db: AsyncSession,
    item: KnowledgeItem,
    user: User,
    data: KnowledgeUpdate,
    limits: KnowledgeSettings,
) -> list[str]:
    """Change what `data` gives; returns the names of the fields that changed. Approving
    sets who approved it and when; rejecting clears them."""
    changed: list[str] = []
    if data.title is not None and data.title.strip() != item.title:
        item.title = data.title.strip()
        changed.append("title")
    if data.body is not None and data.body.strip() != item.body:
        bounded(data.body, limits)
        item.body = data.body.strip()
        changed.append("body")
    if "applies_to" in data.model_fields_set:
        project = await db.get(Project, item.project_id)
        assert project is not None
        target = data.applies_to or AppliesTo()
        target = await targets.checked(db, project, target)
        before = applies_to_of(item)
        _place(item, target)
        if applies_to_of(item) != before:
            changed.append("applies_to")
    if data.status is not None and data.status != item.status:
        item.status = data.status.value
        approved = data.status == KnowledgeStatus.approved
        item.approved_by = user.id if approved else None
        item.approved_at = utcnow() if approved else None
        changed.append("status")
    if changed:
        item.tokens = estimate_tokens(item.title, item.body)
        item.updated_at = utcnow()
        await db.flush()
    return changed


async def delete(db: AsyncSession, item: KnowledgeItem) -> None:
    await db.delete(item)
    await db.flush()


def applies_to_of(item: KnowledgeItem) -> AppliesTo:
    return AppliesTo(
        file_id=item.file_id,
        source_id=item.source_id,
        table=item.table_name,
        column=item.column_name,
    )


async def out(db: AsyncSession, items: Sequence[KnowledgeItem]) -> list[KnowledgeOut]:
    """The items as the API shows them: with their authors' emails and, where it applies,
    a sentence saying that what they apply to is gone."""
    people = {i.created_by for i in items} | {i.approved_by for i in items}
    people.discard(None)
    emails: dict[uuid.UUID, str] = {}
    if people:
        rows = await db.execute(select(User.id, User.email).where(User.id.in_(people)))
        emails = {row[0]: row[1] for row in rows}
    gone = await targets.missing(db, items)
    return [
        KnowledgeOut(
            id=i.id,
            project_id=i.project_id,
            kind=KnowledgeKind(i.kind),
            title=i.title,
            body=i.body,
            applies_to=applies_to_of(i),
            status=KnowledgeStatus(i.status),
            source_run_id=i.source_run_id,
            created_by=i.created_by,
            created_by_email=emails.get(i.created_by) if i.created_by else None,
            approved_by=i.approved_by,
            approved_by_email=emails.get(i.approved_by) if i.approved_by else None,
            approved_at=i.approved_at,
            created_at=i.created_at,
            updated_at=i.updated_at,
            flags=list(i.flags or []),
            tokens=i.tokens,
            target_missing=gone.get(i.id),
        )
        for i in items
    ]

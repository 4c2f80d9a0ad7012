"""Data sources of a project (API.md, "Data sources"): add, list, change and delete them,
check them, and read and describe their schema."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from app import audit
from app.api import knowledge as knowledge_api
from app.api.deps import (
    CurrentUser,
    DbDep,
    NeededRole,
    OwnedProject,
    OwnerProject,
    PageDep,
    SettingsDep,
    UserActionRateLimitDep,
    require_role,
)
from app.audit import Action
from app.errors import TooManyRequests
from app.infra.ratelimit import wait_sentence
from app.models import DataSource
from app.ownership import Role
from app.schemas import Page
from app.sources import checking, dictionary, sampling, service
from app.sources.schemas import (
    CheckOut,
    ColumnOut,
    SampleColumn,
    SampleOut,
    SchemaOut,
    SchemaPatch,
    SourceCreate,
    SourceOut,
    SourceUpdate,
    TableOut,
)

router = APIRouter(tags=["sources"])

# The audit log's event for each change the data dictionary makes to a column item.
DICTIONARY_ACTIONS = {
    "created": Action.knowledge_created,
    "updated": Action.knowledge_updated,
    "deleted": Action.knowledge_deleted,
}


async def owned_source(
    source_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> DataSource:
    return await service.get_owned(db, user, source_id, need)


async def owner_source(source_id: uuid.UUID, db: DbDep, user: CurrentUser) -> DataSource:
    return await service.get_owned(db, user, source_id, Role.owner)


# Any member reads a source and its schema; an editor checks it and writes its descriptions;
# its credentials (adding one, its URL and password, deleting it) are the owners'.
OwnedSource = Annotated[DataSource, Depends(owned_source)]
OwnerSource = Annotated[DataSource, Depends(owner_source)]


async def _within_limit(
    limit: UserActionRateLimitDep, user: CurrentUser, action: str, per_minute: int
) -> None:
    """Count a check (`check`) or an addition (`creation`) of a source by the user: each
    connects to a server the user names, so neither may be asked for without end (a port
    scanner of the server's network)."""
    wait = await limit.attempt(f"source_{action}", str(user.id), per_minute)
    if wait:
        raise TooManyRequests(
            f"Too many source {action}s: each user may ask for {per_minute} a minute; try "
            f"again in {wait_sentence(wait)}.",
            retry_after=wait,
        )


def _out(source: DataSource) -> SourceOut:
    return SourceOut.model_validate(
        {
            **{k: getattr(source, k) for k in SourceOut.model_fields if k != "display_url"},
            "display_url": service.display_url(source),
        }
    )


@router.post(
    "/projects/{project_id}/sources", response_model=SourceOut, status_code=status.HTTP_201_CREATED
)
async def create_source(
    body: SourceCreate,
    project: OwnerProject,
    db: DbDep,
    settings: SettingsDep,
    user: CurrentUser,
    limit: UserActionRateLimitDep,
) -> SourceOut:
    """Add a source, then check it (its status says how that went). Owners only: a
    source's credentials are theirs. At most SOURCES_CREATIONS_PER_MINUTE per user (429)."""
    await _within_limit(limit, user, "creation", settings.SOURCES_CREATIONS_PER_MINUTE)
    source = await service.create(db, project, body, settings)
    about = {"source_id": str(source.id), "name": source.name, "kind": source.kind}
    await audit.record(db, project.id, user, Action.source_added, ("source", source.id), about)
    await checking.check(db, source, settings)
    return _out(source)


@router.get("/projects/{project_id}/sources", response_model=Page[SourceOut])
async def list_sources(project: OwnedProject, db: DbDep, page: PageDep) -> Page[SourceOut]:
    items, total = await service.list_for_project(db, project, page.limit, page.offset)
    return Page(items=[_out(s) for s in items], total=total)


@router.get("/sources/{source_id}", response_model=SourceOut)
async def get_source(source: OwnedSource) -> SourceOut:
    return _out(source)


@router.patch("/sources/{source_id}", response_model=SourceOut)
async def update_source(
    body: SourceUpdate,
    source: OwnedSource,
    db: DbDep,
    settings: SettingsDep,
    user: CurrentUser,
    limit: UserActionRateLimitDep,
) -> SourceOut:
    """Rename, describe, or point the source elsewhere (then it is checked again, counted
    as a check); a new URL or password is for owners only, and a URL naming another server,
    port, user, database or kind needs the password again (400 `password_required`)."""
    connect_again = body.url is not None or body.password is not None
    if connect_again:
        await require_role(db, user, source.project_id, Role.owner)
        await _within_limit(limit, user, "check", settings.SOURCES_CHECKS_PER_MINUTE)
    # What changed (the URL's parts by name), never a value: a URL may hold a password.
    fields = await service.update(db, source, body, settings)
    await _changed(db, user, source, fields)
    if connect_again:
        await checking.check(db, source, settings)
    return _out(source)


async def _changed(db: DbDep, user: CurrentUser, source: DataSource, fields: list[str]) -> None:
    about = {"source_id": str(source.id), "name": source.name, "fields": fields}
    await audit.record(
        db, source.project_id, user, Action.source_changed, ("source", source.id), about
    )


@router.delete("/sources/{source_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_source(source: OwnerSource, db: DbDep, user: CurrentUser) -> Response:
    await service.delete(db, source)
    about = {"source_id": str(source.id), "name": source.name}
    await audit.record(
        db, source.project_id, user, Action.source_deleted, ("source", source.id), about
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/sources/{source_id}/check", response_model=CheckOut)
async def check_source(
    source: OwnedSource,
    db: DbDep,
    settings: SettingsDep,
    user: CurrentUser,
    limit: UserActionRateLimitDep,
) -> CheckOut:
    """Connect and list the tables now, within the connect timeout; the answer says why not
    (what answered at the address, or the database's own refusal). At most
    SOURCES_CHECKS_PER_MINUTE per user (429)."""
    await _within_limit(limit, user, "check", settings.SOURCES_CHECKS_PER_MINUTE)
    result = await checking.check(db, source, settings)
    return CheckOut.model_validate(result, from_attributes=True)


@router.get("/sources/{source_id}/schema", response_model=SchemaOut)
async def get_schema(source: OwnedSource, db: DbDep) -> SchemaOut:
    """The tables as the last check listed them, with the team's descriptions."""
    return await _schema(db, source)


@router.get("/sources/{source_id}/sample", response_model=SampleOut)
async def sample_table(
    source: OwnedSource,
    db: DbDep,
    settings: SettingsDep,
    table: Annotated[str, Query(min_length=1, max_length=255)],
    schema: Annotated[str | None, Query(max_length=255)] = None,
    limit: Annotated[int, Query(ge=1, le=sampling.MAX_SAMPLE_ROWS)] = sampling.DEFAULT_SAMPLE_ROWS,
) -> SampleOut:
    """A table's first rows (any member): only a table the last check listed, read as the
    agent's queries are (read-only, the statement timeout, capped). 404 table_not_found,
    409 source_not_ready or sample_failed (the database's sentence), 503 samples_busy."""
    found = await sampling.sample(db, source, settings, schema, table, limit)
    return SampleOut(
        schema=found.schema,
        table=found.table,
        columns=[SampleColumn(name=n, type=t) for n, t in found.columns],
        rows=found.rows,
        limit=found.limit,
    )


@router.patch("/sources/{source_id}/schema", response_model=SchemaOut)
async def describe_schema(
    body: SchemaPatch, source: OwnedSource, db: DbDep, user: CurrentUser, settings: SettingsDep
) -> SchemaOut:
    """Set descriptions of tables and columns (an empty one removes it). Each is an approved
    `column` item of the project's knowledge (GET /projects/{id}/knowledge lists it)."""
    changes = await dictionary.describe(db, source, body, user, settings)
    await _changed(db, user, source, ["descriptions"])
    for change in changes:
        await knowledge_api.record(db, user, DICTIONARY_ACTIONS[change.what], change.item)
    return await _schema(db, source)


async def _schema(db: DbDep, source: DataSource) -> SchemaOut:
    tables = await dictionary.tables_of(db, source)
    return SchemaOut(
        tables=[
            TableOut(
                schema=t.schema,
                name=t.name,
                description=t.description,
                description_source=t.description_source,
                row_estimate=t.row_estimate,
                columns=[
                    ColumnOut(
                        name=c.name,
                        type=c.type,
                        nullable=c.nullable,
                        description=c.description,
                        description_source=c.description_source,
                    )
                    for c in t.columns
                ],
            )
            for t in tables
        ],
        truncated=source.schema_truncated,
        checked_at=source.checked_at,
    )

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import StreamingResponse

from app import audit
from app.api.deps import (
    CurrentUser,
    DbDep,
    OwnedFile,
    OwnedProject,
    PageDep,
    SettingsDep,
    StorageDep,
    previews_of,
)
from app.api.headers import stored_bytes_headers
from app.audit import Action
from app.db import release_connection
from app.errors import PayloadTooLarge
from app.files import service
from app.files.preview.filters import MAX_CONDITIONS, parse_filter
from app.files.preview.paging import MAX_PAGE_ROWS, Window
from app.files.preview_process import PreviewsBusy, preview_owner
from app.files.schemas import (
    READERS_SHOWN,
    FileOut,
    FilePreview,
    FileProfile,
    FileVersionOut,
    VersionReader,
)
from app.files.upload import MultipartFile
from app.files.whole_file_work import makes_table_copy
from app.models import File, User
from app.quotas import guard
from app.quotas.guard import UploadQuota
from app.schemas import Page

router = APIRouter(tags=["files"])

# Room for the multipart envelope (boundaries, part headers) around the file itself.
_ENVELOPE_BYTES = 64 * 1024

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            }
        },
    }
}


@router.post(
    "/projects/{project_id}/files",
    response_model=FileOut,
    status_code=status.HTTP_201_CREATED,
    openapi_extra=_UPLOAD_BODY,
    responses={
        413: {
            "description": "Over the upload limit (file_too_large), or past the project's or "
            "the uploader's storage quota (storage_quota_exceeded)"
        },
        415: {"description": "Unsupported type"},
    },
)
async def upload_file(
    request: Request,
    project: OwnedProject,
    db: DbDep,
    storage: StorageDep,
    settings: SettingsDep,
    user: CurrentUser,
) -> FileOut:
    """Upload a file (multipart field `file`). Uploading a name again makes a new version of
    that file (same id): runs read the newest, earlier ones stay under /files/{id}/versions.
    A tabular file is read right away (its preview): `check` and `problem` say whether it
    is unreadable or empty, so a bad file is flagged before anyone asks about it.

    The bytes count against the project's and the uploader's storage quotas: an upload
    past either answers 413 `storage_quota_exceeded`, saying which and what fills it."""
    limit = settings.MAX_UPLOAD_BYTES
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + _ENVELOPE_BYTES:
        raise PayloadTooLarge(f"The file is larger than the upload limit of {limit:,} bytes.")
    quota = UploadQuota(settings, project, user)
    await quota.measure(db)
    if declared and declared.isdigit():
        quota.refuse(max(0, int(declared) - _ENVELOPE_BYTES))
    form = MultipartFile(request)
    await release_connection(db)  # no connection is held while the bytes stream in
    cache_dir = settings.previews_cache
    file = await service.upload(
        db, storage, project.id, form, limit, quota, settings.FILE_VERSIONS_KEPT, cache_dir
    )
    action = Action.file_uploaded if file.version == 1 else Action.file_replaced
    about = {"file_id": str(file.id), "name": file.name, "size": file.size, "version": file.version}
    await audit.record(db, project.id, user, action, ("file", file.id), about)
    room = quota.room()  # as measured with the upload in it: a typed copy must fit too
    copies = room is None or file.size <= room
    await release_connection(db)  # stored; the check below holds no connection
    try:
        with preview_owner(str(user.id)):
            await service.check(storage, file, cache_dir, copies)
    except PreviewsBusy:
        pass  # stored all the same; `check` stays null (not checked) and a preview reads it later
    return FileOut.model_validate(file)


@router.get("/projects/{project_id}/files", response_model=Page[FileOut])
async def list_files(project: OwnedProject, db: DbDep, page: PageDep) -> Page[FileOut]:
    items, total = await service.list_for_project(db, project, page.limit, page.offset)
    return Page(items=[FileOut.model_validate(f) for f in items], total=total)


@router.get("/files/{file_id}", response_model=FileOut)
async def get_file(file: OwnedFile) -> FileOut:
    return FileOut.model_validate(file)


@router.delete("/files/{file_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_file(
    file: OwnedFile, db: DbDep, storage: StorageDep, settings: SettingsDep, user: CurrentUser
) -> Response:
    await service.delete(db, storage, file, settings.previews_cache)
    about = {"file_id": str(file.id), "name": file.name}
    await audit.record(db, file.project_id, user, Action.file_deleted, ("file", file.id), about)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/files/{file_id}/content",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "The original bytes"}
    },
)
async def download_file(
    file: OwnedFile, db: DbDep, storage: StorageDep, user: CurrentUser
) -> StreamingResponse:
    body = await service.stream_object(storage, file.storage_key)
    await _downloaded(db, file, user, file.size)
    media_type, headers = stored_bytes_headers(file.name, file.content_type, inline=False)
    headers |= {"Content-Length": str(file.size), "ETag": f'"{file.sha256}"'}
    return StreamingResponse(body, media_type=media_type, headers=headers)


async def _downloaded(
    db: DbDep, file: File, user: User, size: int, version: int | None = None
) -> None:
    """A file's bytes leave the workbench: the audit log says who took which."""
    about: dict[str, Any] = {"file_id": str(file.id), "name": file.name, "size": size}
    if version is not None:
        about["version"] = version
    await audit.record(db, file.project_id, user, Action.file_downloaded, ("file", file.id), about)


@router.get("/files/{file_id}/versions", response_model=list[FileVersionOut])
async def list_versions(file: OwnedFile, db: DbDep) -> list[FileVersionOut]:
    """The versions kept of this file, newest (the current one) first, each with the
    questions that read it."""
    readers = await service.readers(db, file, READERS_SHOWN)
    versions = []
    for v in await service.versions(db, file):
        read_by, total = readers.get(v.version, ([], 0))
        versions.append(
            FileVersionOut.model_validate(v).model_copy(
                update={
                    "current": v.version == file.version,
                    "read_by": [VersionReader.model_validate(r) for r in read_by],
                    "read_by_total": total,
                }
            )
        )
    return versions


@router.get(
    "/files/{file_id}/versions/{version}/content",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "That version's bytes"}
    },
)
async def download_version(
    file: OwnedFile, version: int, db: DbDep, storage: StorageDep, user: CurrentUser
) -> StreamingResponse:
    kept = await service.get_version(db, file, version)
    body = await service.stream_object(storage, kept.storage_key)
    await _downloaded(db, file, user, kept.size, version)
    stem, dot, suffix = file.name.rpartition(".")
    name = f"{stem} (version {version}).{suffix}" if dot else f"{file.name} (version {version})"
    media_type, headers = stored_bytes_headers(name, file.content_type, inline=False)
    headers |= {"Content-Length": str(kept.size), "ETag": f'"{kept.sha256}"'}
    return StreamingResponse(body, media_type=media_type, headers=headers)


_SHEET = Query(
    min_length=1,
    max_length=255,
    description="A worksheet of an Excel workbook, by name (default: the first)",
)


_HEADER_ROW = Query(
    ge=0,
    le=10_000,
    description="The row that holds the column names, counted from 0 (blank lines of a CSV "
    "not counted); default: the one detected under any title rows. CSV and Excel only",
)


# What reading a file's contents can answer besides 200 (preview and profile alike).
_PARSE_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such file, or no such sheet in the workbook"},
    415: {"description": "Not a tabular file"},
    422: {"description": "Cannot be parsed, or a sheet asked of a file that is not a workbook"},
    503: {"description": "Too many of your previews wait already (server_busy); see Retry-After"},
}


@router.get(
    "/files/{file_id}/preview",
    response_model=FilePreview,
    responses=_PARSE_RESPONSES,
)
async def preview_file(
    file: OwnedFile,
    db: DbDep,
    storage: StorageDep,
    settings: SettingsDep,
    user: CurrentUser,
    sheet: Annotated[str | None, _SHEET] = None,
    offset: Annotated[
        int, Query(ge=0, description="The first row to show, counted from 0 after sorting")
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE_ROWS, description="How many rows to show (at most 500)")
    ] = 50,
    sort: Annotated[
        str | None,
        Query(min_length=1, max_length=1000, description="A column to sort all rows by"),
    ] = None,
    order: Annotated[Literal["asc", "desc"], Query(description="The sort's direction")] = "asc",
    header_row: Annotated[int | None, _HEADER_ROW] = None,
    filter_: Annotated[
        str | None,
        Query(
            alias="filter",
            max_length=40_000,
            description='Only the rows that meet all these conditions, as JSON: [{"column":'
            ' "Amount", "op": "gt", "value": 100}]; op is one of eq, ne, contains (text, '
            "case-blind), gt, ge, lt, le, empty, not_empty (no value); numbers compare as "
            f"numbers, dates (2025-07-31) as dates; at most {MAX_CONDITIONS} conditions. "
            "`row_count` then counts the matching rows",
        ),
    ] = None,
) -> FilePreview:
    """The file's columns with their types and rows `offset` to `offset + limit` of the
    whole table, sorted over all its rows by `sort` when given, with its exact row count.
    A workbook lists its worksheets (`sheets`) and shows one (`sheet`); a CSV says how it
    was read (`format`: delimiter, decimal separator, encoding); a CSV or worksheet says the
    row its column names came from (`header_row`: detected under title rows, or chosen).
    Text columns read as dates, numbers (amounts, percents) or yes/no say how
    (`date_format`, `unit`, `true_values`/`false_values`); a column that mixes kinds says
    how it was read (`reading`), and a cell it could not read is `{"unreadable": text}`.
    `filter` keeps the rows that meet all its conditions (`row_count` counts them,
    `unfiltered_row_count` all rows); a bad filter answers 422 `bad_filter`."""
    cache_dir = settings.previews_cache
    conditions = tuple(parse_filter(filter_))
    window = Window(
        offset=offset, limit=limit, sort=sort, descending=order == "desc", conditions=conditions
    )
    # A big CSV's typed copy counts against the storage quotas: past them, none is made.
    refused = None
    if not window.in_head and makes_table_copy(file):
        refused = await guard.copy_refused(db, settings, file)
    await release_connection(db)  # parsing may take seconds; the row is written after
    with previews_of(user):
        shown = await service.preview(
            storage,
            file,
            cache_dir,
            sheet,
            header_row=header_row,
            window=window,
            copies=refused is None,
        )
    return FilePreview.model_validate(shown | {"notice": refused})


@router.get(
    "/files/{file_id}/profile",
    response_model=FileProfile,
    responses=_PARSE_RESPONSES,
)
async def profile_file(
    file: OwnedFile,
    db: DbDep,
    storage: StorageDep,
    settings: SettingsDep,
    user: CurrentUser,
    sheet: Annotated[str | None, _SHEET] = None,
    header_row: Annotated[int | None, _HEADER_ROW] = None,
) -> FileProfile:
    """Each column's type, missing and distinct counts, and its range and mean (numbers,
    dates) or most frequent values (text), over the first rows (up to 100,000, fewer for
    wide tables and workbooks): `rows_profiled` says how many, `complete` whether that is
    the whole file."""
    cache_dir = settings.previews_cache
    await release_connection(db)  # parsing may take seconds; the row is written after
    with previews_of(user):
        shown = await service.profile(storage, file, cache_dir, sheet, header_row)
    return FileProfile.model_validate(shown)

"""Read-only links to a session's report (API.md, "Members and shared reports"): make, list
and revoke them; and the one route of the API that takes no login, the link itself."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response, status
from fastapi.responses import HTMLResponse, JSONResponse

from app.api.deps import (
    CurrentUser,
    DbDep,
    NeededRole,
    OwnedSession,
    PageDep,
    SettingsDep,
    SharedLinkRateLimitDep,
    StorageDep,
)
from app.api.headers import dead_link_headers, shared_report_headers
from app.config import Settings
from app.errors import NotFound, TooManyRequests
from app.infra.ratelimit import wait_sentence
from app.jobs import service as jobs_service
from app.models import Session, Share, User
from app.ownership import Role
from app.schemas import Page, PersonOut
from app.sessions import export
from app.shares import job_links, job_page, service
from app.shares.schemas import JobShareOut, ShareCreate, ShareCreated, ShareOut
from app.sources.service import keyring_of

router = APIRouter(tags=["shares"])

# The one answer for every link that opens nothing: unknown, altered, revoked, expired, or
# its session or project deleted.
GONE = (
    "This link does not open a report: it may have expired or been revoked. Ask whoever "
    "sent it for a new one."
)


async def owned_share(share_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole) -> Share:
    return await service.get_owned(db, user, share_id, need)


OwnedShare = Annotated[Share, Depends(owned_share)]


@router.post(
    "/sessions/{session_id}/shares",
    response_model=ShareCreated,
    status_code=status.HTTP_201_CREATED,
    responses={422: {"description": "A run that is not the session's, or nothing to share"}},
)
async def create_share(
    body: ShareCreate,
    session: OwnedSession,
    db: DbDep,
    user: CurrentUser,
    settings: SettingsDep,
    request: Request,
) -> ShareCreated:
    """Make a link to the session's report (editors and owners): anyone who has it sees the
    report of these runs, without logging in, until it expires or is revoked. The token is
    in this answer only."""
    share, token = await service.create(db, session, body, user)
    return _created(share, token, settings, request)


@router.post(
    "/shares/{share_id}/reissue",
    response_model=ShareCreated,
    status_code=status.HTTP_201_CREATED,
    responses={422: {"description": "The link has expired (share_expired)"}},
)
async def reissue_share(
    share_id: uuid.UUID, db: DbDep, user: CurrentUser, settings: SettingsDep, request: Request
) -> ShareCreated:
    """Re-issue a link (owners): a new link of yours to the same questions, until the same
    day; the old one is revoked. For a link whose author lost access (removed, made a
    viewer or disabled), which opens nothing. The token is in this answer only."""
    share = await service.get_owned(db, user, share_id, Role.owner)
    made, token = await service.reissue(db, share, user)
    return _created(made, token, settings, request)


def _created(share: Share, token: str, settings: Settings, request: Request) -> ShareCreated:
    base = settings.PUBLIC_URL or str(request.base_url).rstrip("/")
    url = base + request.app.url_path_for("open_shared_link", token=token)
    return ShareCreated(id=share.id, url=url, token=token, expires_at=share.expires_at)


@router.get("/jobs/{job_id}/share", response_model=JobShareOut | None)
async def get_job_share(
    job_id: uuid.UUID, db: DbDep, user: CurrentUser, settings: SettingsDep
) -> JobShareOut | None:
    """The job's share link (editors and owners), made when its alerts are saved with a
    `{channel: "share"}` delivery: it always shows the job's latest run. Revoke it with
    DELETE /shares/{id}; saving the alerts again makes a new one. null: the job has no link
    that opens."""
    job = await jobs_service.get_job(db, user, job_id, Role.editor)
    share = await job_links.active(db, job.id, job.project_id)
    if share is None:
        return None
    url = job_links.url_of(share, keyring_of(settings), settings.public_url)
    return JobShareOut(id=share.id, url=url, expires_at=share.expires_at)


@router.get("/sessions/{session_id}/shares", response_model=Page[ShareOut])
async def list_shares(session: OwnedSession, db: DbDep, page: PageDep) -> Page[ShareOut]:
    """The session's links, newest first, revoked and expired ones too (never a token), with
    where each stands (`status`)."""
    items, total = await service.list_for_session(db, session, page.limit, page.offset)
    return Page(items=[_out(*item) for item in items], total=total)


def _out(share: Share, user: User | None, state: service.ShareStatus) -> ShareOut:
    return ShareOut(
        id=share.id,
        session_id=share.session_id,
        runs=[uuid.UUID(r) for r in share.runs],
        created_at=share.created_at,
        created_by=PersonOut(user_id=user.id, email=user.email) if user else None,
        expires_at=share.expires_at,
        revoked_at=share.revoked_at,
        active=state == "active",
        status=state,
    )


@router.delete("/shares/{share_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_share(share: OwnedShare, db: DbDep, user: CurrentUser) -> Response:
    """Revoke a link (editors and owners): it opens nothing from now on, on every server.
    Revoking it again is no error."""
    await service.revoke(db, share, user)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/shared/{token}",
    response_class=HTMLResponse,
    responses={
        200: {"description": "The report (a standalone HTML page)"},
        404: {"description": "The link opens nothing (unknown, revoked or expired)"},
        429: {"description": "Too many links that open nothing from this address"},
        503: {"description": "Too many reports being made at once (server_busy); retry"},
    },
)
async def open_shared_link(
    token: str,
    request: Request,
    db: DbDep,
    storage: StorageDep,
    limit: SharedLinkRateLimitDep,
) -> Response:
    """A shared link, without logging in: the report of the runs it holds, served under the
    report's own Content-Security-Policy (its scripts alone run, in a sandbox). Every link
    that opens nothing gets the same 404; an address that asks for too many is refused
    for a while (429)."""
    address = request.client.host if request.client else None
    wait = await limit.attempt(address)
    if wait:
        raise TooManyRequests(
            "Too many links that open nothing were asked for from this address; try again "
            f"in {wait_sentence(wait)}.",
            retry_after=wait,
        )
    found = await service.opened(db, token)
    if found is None:
        return _gone(request)
    await limit.succeeded(address)
    share, session = found
    if share.job_id is not None:
        return await _job_link(request, db, storage, share, session)
    try:
        with export.slot():
            runs = [uuid.UUID(r) for r in share.runs]
            shown = await export.gather_shared(db, storage, session, runs)
            body, policy = await asyncio.to_thread(export.shared_report, shown)
    except export.UnknownRuns:
        return _gone(request)
    await service.record_opened(db, share, session)
    return HTMLResponse(body, headers=shared_report_headers(policy))


async def _job_link(
    request: Request, db: DbDep, storage: StorageDep, share: Share, session: Session
) -> Response:
    """A job's link (app.shares.job_links): its latest run, as a page or (`?format=json`)
    JSON."""
    assert share.job_id is not None
    view = await job_page.gather(db, storage, share.job_id)
    if view is None:
        return _gone(request)
    await service.record_opened(db, share, session)
    if request.query_params.get("format") == "json":
        return JSONResponse(job_page.as_json(view), headers=dead_link_headers())
    body = await job_page.as_html(view)
    return HTMLResponse(body, headers=shared_report_headers(job_page.PAGE_POLICY))


def _gone(request: Request) -> Response:
    """The link opens nothing: a page saying so for a browser (someone clicked the link),
    the API's error for any other client. Both are the same for every dead link."""
    if "text/html" not in request.headers.get("accept", ""):
        raise NotFound(GONE, code="share_not_found")
    return HTMLResponse(
        GONE_PAGE, status_code=status.HTTP_404_NOT_FOUND, headers=dead_link_headers()
    )


GONE_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>This link opens nothing · Workbench</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; margin: 0; display: grid; min-height: 100vh;
  place-items: center; background: #f8fafc; color: #0f172a; }}
main {{ max-width: 32rem; padding: 2rem; }}
h1 {{ font-size: 1.25rem; margin: 0 0 .5rem; }}
p {{ margin: 0; color: #475569; }}
@media (prefers-color-scheme: dark) {{ body {{ background: #0b1120; color: #e2e8f0; }}
  p {{ color: #94a3b8; }} }}
</style></head>
<body><main><h1>This shared report is not available</h1><p>{GONE}</p></main></body></html>
"""

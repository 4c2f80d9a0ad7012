"""Invites (API.md, "Daily use III"): make, list and revoke them; and accept one, without a
login, which answers as a login does."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Depends, Query, Request, Response, status

from app.api.deps import CurrentUser, DbDep, InviteRateLimitDep, PageDep, SettingsDep
from app.auth import service as auth_service
from app.auth.schemas import UserOut
from app.config import Settings
from app.errors import NotFound, TooManyRequests
from app.infra.ratelimit import wait_sentence
from app.invites import service
from app.invites.delivery import invite_text, send_invite
from app.invites.schemas import (
    InviteAccept,
    InviteAccepted,
    InviteCreate,
    InviteCreated,
    InviteOut,
)
from app.mail.sender import MailSender
from app.models import Invite, Project, User
from app.schemas import Page, PersonOut

router = APIRouter(tags=["invites"])


def get_mail_sender(request: Request) -> MailSender:
    state = request.app.state
    sender: MailSender | None = getattr(state, "mail_sender", None)
    if sender is None:
        sender = state.mail_sender = MailSender()
    return sender


MailSenderDep = Annotated[MailSender, Depends(get_mail_sender)]


def invite_url(settings: Settings, request: Request, token: str) -> str:
    """The SPA's page for the invite; the token rides in the fragment, which browsers never
    send to a server (so it is in no access log)."""
    base = settings.PUBLIC_URL or str(request.base_url).rstrip("/")
    return f"{base.rstrip('/')}/invite#{token}"


@router.post(
    "/invites",
    response_model=InviteCreated,
    status_code=status.HTTP_201_CREATED,
    responses={
        403: {"description": "Not an administrator nor an owner of the project"},
        404: {"description": "No such project (or not yours)"},
        409: {"description": "The email has an account already (email_taken)"},
    },
)
async def create_invite(
    body: InviteCreate,
    db: DbDep,
    user: CurrentUser,
    settings: SettingsDep,
    request: Request,
    tasks: BackgroundTasks,
    sender: MailSenderDep,
) -> InviteCreated:
    """Invite someone by email (administrators: to any project or none; owners: to their
    project, with a role). The link is in this answer only; with SMTP configured it is also
    emailed (after this answer: `email_status` in GET /invites says how it went)."""
    invite, token = await service.create(
        db, body, user, default_days=settings.INVITE_DAYS, max_days=settings.INVITE_MAX_DAYS
    )
    url = invite_url(settings, request, token)
    if settings.SMTP_HOST:
        invite.email_status = "sending"
        project = await db.get(Project, invite.project_id) if invite.project_id else None
        text = invite_text(url, user.email, project.name if project else None, invite.expires_at)
        tasks.add_task(
            send_invite,
            sender,
            request.app.state.session_factory,
            settings,
            invite.id,
            "You are invited to Workbench",
            text,
        )
    return InviteCreated(
        id=invite.id,
        url=url,
        token=token,
        expires_at=invite.expires_at,
        email=invite.email,
        project_id=invite.project_id,
        role=invite.role,  # type: ignore[arg-type]
        email_status=invite.email_status,  # type: ignore[arg-type]
    )


@router.get("/invites", response_model=Page[InviteOut])
async def list_invites(
    db: DbDep,
    user: CurrentUser,
    page: PageDep,
    project_id: Annotated[uuid.UUID | None, Query(description="Only this project's")] = None,
) -> Page[InviteOut]:
    """The invites you manage, newest first (administrators: all; owners: their projects'),
    used, revoked and expired ones too; never a token."""
    items, total = await service.list_managed(db, user, project_id, page.limit, page.offset)
    return Page(items=[_out(i, name, maker) for i, name, maker in items], total=total)


def _out(invite: Invite, project_name: str | None, maker: User | None) -> InviteOut:
    return InviteOut(
        id=invite.id,
        email=invite.email,
        project_id=invite.project_id,
        project_name=project_name,
        role=invite.role,  # type: ignore[arg-type]
        created_by=PersonOut(user_id=maker.id, email=maker.email) if maker else None,
        created_at=invite.created_at,
        expires_at=invite.expires_at,
        accepted_at=invite.accepted_at,
        revoked_at=invite.revoked_at,
        status=service.status(invite),
        email_status=invite.email_status,  # type: ignore[arg-type]
        email_error=invite.email_error,
    )


@router.delete("/invites/{invite_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_invite(invite_id: uuid.UUID, db: DbDep, user: CurrentUser) -> Response:
    """Revoke an invite (administrators, or the project's owners): its link accepts nothing
    from now on. Revoking it again is no error."""
    invite = await service.get_managed(db, user, invite_id)
    await service.revoke(db, invite, user)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/invites/{token}/accept",
    response_model=InviteAccepted,
    responses={
        404: {"description": "The invite was used, revoked or has expired (invite_not_found)"},
        409: {"description": "The email has an account already: sign in (email_taken)"},
        429: {"description": "Too many tokens that accept nothing from this address"},
    },
)
async def accept_invite(
    token: str,
    body: InviteAccept,
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    limit: InviteRateLimitDep,
) -> InviteAccepted:
    """Accept an invite without logging in: the account is made with this password (and the
    membership the invite names), and the answer is a login."""
    address = request.client.host if request.client else None
    wait = await limit.attempt(address)
    if wait:
        raise TooManyRequests(
            "Too many invite links that accept nothing were tried from this address; try "
            f"again in {wait_sentence(wait)}.",
            retry_after=wait,
        )
    invite = await service.opened(db, token)
    if invite is None:
        raise NotFound(service.GONE, code="invite_not_found")
    await limit.succeeded(address)
    user = await service.accept(db, invite, body.password)
    login = auth_service.issue_login(
        user, settings.signing_key, timedelta(minutes=settings.ACCESS_TOKEN_TTL_MINUTES)
    )
    return InviteAccepted(
        access_token=login.token,
        expires_at=login.expires_at,
        user=UserOut.model_validate(user),
        project_id=invite.project_id,
    )

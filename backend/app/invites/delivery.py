"""Sending an invite by email after the request that made it has answered: the email goes
out in a worker thread (app.mail.sender) and its outcome is written on the invite, where
its maker sees it (`email_status`, `email_error`). The link works whatever the email does."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.mail.sender import MailFailed, MailSender
from app.models import Invite

log = logging.getLogger(__name__)


def invite_text(url: str, inviter: str, project: str | None, until: datetime) -> str:
    where = f"the project “{project}” on Workbench" if project else "Workbench"
    return (
        f"{inviter} invites you to {where}.\n\n"
        f"Open this link to choose your password and sign in:\n\n  {url}\n\n"
        f"It works once, until {until:%Y-%m-%d %H:%M} UTC. If you did not expect it, ignore "
        "this email.\n"
    )


async def send_invite(
    sender: MailSender,
    factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    invite_id: uuid.UUID,
    subject: str,
    text: str,
) -> None:
    """Send the invite's email and note how it went on the invite."""
    async with factory() as db:
        invite = await db.get(Invite, invite_id)
        if invite is None:
            return
        to = invite.email
    error: str | None = None
    try:
        await sender.send(settings, to, subject, text)
    except MailFailed as exc:
        error = _scrubbed(str(exc), settings)
        log.warning("the invite email to %s failed: %s", to, error)
    async with factory() as db:
        invite = await db.get(Invite, invite_id)
        if invite is None:
            return
        invite.email_status = "failed" if error else "sent"
        invite.email_error = error
        await db.commit()


def _scrubbed(text: str, settings: Settings) -> str:
    """A sentence with no secret of the settings in it (a server may echo what it got)."""
    for secret in settings.secret_values():
        text = text.replace(secret, "[secret]")
    return text[:500]

"""Who a single sign-on names: the account of the ID token's verified email, made on first
sign-in (only from OIDC_ALLOWED_DOMAINS when set), an administrator exactly when the
groups claim holds OIDC_ADMIN_GROUP (when set)."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.oidc import OidcRefused
from app.auth.schemas import normalise_email
from app.auth.service import DISABLED
from app.config import Settings
from app.models import User

log = logging.getLogger(__name__)

# The password hash of an account made by single sign-on: no password matches it (argon2
# cannot read it), until the person is given one (an administrator, or an invite).
NO_PASSWORD = "!sso"


def _allowed_domains(settings: Settings) -> set[str]:
    raw = settings.OIDC_ALLOWED_DOMAINS or ""
    return {d.strip().lower().lstrip("@") for d in raw.split(",") if d.strip()}


def _groups(claims: dict[str, Any], name: str) -> list[str]:
    value = claims.get(name)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


async def user_for_claims(db: AsyncSession, claims: dict[str, Any], settings: Settings) -> User:
    """The account the verified claims name, made or updated.

    Raises:
        OidcRefused: no email, an unverified one, a domain not allowed, a disabled account.
    """
    raw = claims.get("email")
    if not isinstance(raw, str) or not raw:
        raise OidcRefused(
            "The provider gave no email address for you; ask your administrator to add the "
            "`email` scope (OIDC_SCOPES)."
        )
    if "email_verified" in claims and claims["email_verified"] not in (True, "true"):
        raise OidcRefused("Your email address is not verified at the provider; verify it first.")
    try:
        email = normalise_email(raw)
    except ValueError:
        raise OidcRefused(f"The provider's email address {raw!r} is not valid.") from None
    domains = _allowed_domains(settings)
    if domains and email.rsplit("@", 1)[1] not in domains:
        raise OidcRefused(
            f"Accounts of {email.rsplit('@', 1)[1]} cannot sign in here; this workbench takes "
            f"people of {', '.join(sorted(domains))}."
        )
    user = (await db.scalars(select(User).where(User.email == email))).one_or_none()
    if user is None:
        user = User(email=email, password_hash=NO_PASSWORD, is_admin=False)
        db.add(user)
        try:
            async with db.begin_nested():
                await db.flush()
        except IntegrityError:  # made by a sign-in on another replica just now
            user = (await db.scalars(select(User).where(User.email == email))).one()
        else:
            log.info("made the account %s at its first single sign-on", email)
    if user.disabled:
        raise OidcRefused(DISABLED)
    if settings.OIDC_ADMIN_GROUP:
        user.is_admin = settings.OIDC_ADMIN_GROUP in _groups(claims, settings.OIDC_GROUPS_CLAIM)
    await db.flush()
    return user

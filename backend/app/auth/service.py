"""Users, logins and API tokens."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import security
from app.auth.schemas import ApiTokenCreate, UserCreate, UserUpdate, normalise_email
from app.db import paginate
from app.errors import BadRequest, Conflict, NotFound, TooManyRequests, Unauthorized
from app.infra.ratelimit import LoginRateLimit, wait_sentence
from app.models import ApiToken, Project, ProjectMember, User
from app.models.base import utcnow
from app.observability import metrics

log = logging.getLogger(__name__)


class LoginRateLimited(TooManyRequests):
    code = "rate_limited"


@dataclass(frozen=True)
class Login:
    token: str
    expires_at: datetime
    user: User


async def authenticate(
    db: AsyncSession,
    email: str,
    password: str,
    key: str,
    ttl: timedelta,
    *,
    limit: LoginRateLimit,
    address: str | None,
) -> Login:
    """Log in with a password, unless this address failed too often lately, at this
    account or at all.

    The attempt is counted before the password is checked, so once the limit is reached
    even the right password is refused from that address until the window ends; the
    account's owner elsewhere is not locked out.

    Args:
        db: The request's database session.
        email: The email as typed.
        password: The password as typed.
        key: The key that signs login tokens.
        ttl: How long the login token lasts.
        limit: The login rate limit.
        address: The client's IP address.
    """
    wait = await limit.attempt(email, address)
    if wait:
        metrics.LOGIN_FAILURES.labels("rate_limited").inc()
        raise LoginRateLimited(
            f"Too many failed logins from this address; try again in {wait_sentence(wait)}.",
            retry_after=wait,
        )
    try:
        normalised = normalise_email(email)
    except ValueError:
        normalised = ""
    user = (await db.scalars(select(User).where(User.email == normalised))).one_or_none()
    matches = await security.verify_password(password, user.password_hash if user else None)
    if not matches or user is None:
        metrics.LOGIN_FAILURES.labels("invalid_credentials").inc()
        raise Unauthorized("Wrong email or password.", code="invalid_credentials")
    await limit.succeeded(email, address)
    if user.disabled:
        metrics.LOGIN_FAILURES.labels("account_disabled").inc()
        raise Unauthorized(DISABLED, code="account_disabled")
    return issue_login(user, key, ttl)


DISABLED = "This account is disabled; ask an administrator to enable it."


def issue_login(user: User, key: str, ttl: timedelta) -> Login:
    token, expires = security.create_access_token(user.id, key, ttl, user.login_version)
    return Login(token, expires, user)


async def user_for_token(db: AsyncSession, token: str, key: str) -> User:
    """The user a bearer token (login JWT or API token) belongs to, or Unauthorized."""
    if token.startswith(security.API_TOKEN_PREFIX):
        digest = security.hash_token(token)
        row = (
            await db.execute(
                select(ApiToken, User)
                .join(User, User.id == ApiToken.user_id)
                .where(ApiToken.token_hash == digest)
            )
        ).one_or_none()
        if row is None:
            raise Unauthorized("This API token is not valid or was revoked.", code="invalid_token")
        api_token, user = row
        if user.disabled:
            raise Unauthorized(DISABLED, code="account_disabled")
        api_token.last_used_at = utcnow()
        return user
    try:
        user_id, version = security.read_access_token(token, key)
    except security.TokenExpired:
        raise Unauthorized("Your login has expired; log in again.", code="token_expired") from None
    except security.TokenInvalid:
        raise Unauthorized("This token is not valid.", code="invalid_token") from None
    found = await db.get(User, user_id)
    if found is None:
        raise Unauthorized("This token's user no longer exists.", code="invalid_token")
    if found.disabled:
        raise Unauthorized(DISABLED, code="account_disabled")
    if version != found.login_version:
        raise Unauthorized(
            "The password was changed since this login; log in again.", code="token_expired"
        )
    return found


async def set_password(db: AsyncSession, user: User, password: str) -> int:
    """A new password: every earlier login of the user ends and every API token of theirs
    is revoked (whoever knew the old password may have made one). Returns how many tokens
    were revoked."""
    user.password_hash = await security.hash_password(password)
    user.password_changed_at = utcnow()
    user.login_version += 1
    return await revoke_all_api_tokens(db, user)


async def change_password(
    db: AsyncSession, user: User, current: str, new: str, key: str, ttl: timedelta
) -> Login:
    """The user's own change: the current password first. Returns a new login, since the
    change ends the others (this one's included)."""
    if not await security.verify_password(current, user.password_hash):
        raise BadRequest("The current password is not right.", code="wrong_password")
    await set_password(db, user, new)
    user.must_change_password = False
    await db.flush()
    return issue_login(user, key, ttl)


async def list_users(db: AsyncSession, limit: int, offset: int) -> tuple[list[User], int]:
    return await paginate(db, select(User).order_by(User.created_at, User.email), limit, offset)


async def projects_of(
    db: AsyncSession, user_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[tuple[Project, str]]]:
    """Each user's projects with their role in it, by name."""
    rows = await db.execute(
        select(ProjectMember.user_id, Project, ProjectMember.role)
        .join(Project, Project.id == ProjectMember.project_id)
        .where(ProjectMember.user_id.in_(user_ids))
        .order_by(Project.name, Project.id)
    )
    found: dict[uuid.UUID, list[tuple[Project, str]]] = {}
    for user_id, project, role in rows.all():
        found.setdefault(user_id, []).append((project, role))
    return found


async def update_user(
    db: AsyncSession, admin: User, user_id: uuid.UUID, data: UserUpdate
) -> tuple[User, str | None]:
    """An administrator's changes to a user: role, enabled or not, a new password (typed,
    or generated: returned, and to be changed at their next login), their storage quota."""
    user = await get_user(db, user_id)
    if user.id == admin.id and (data.disabled or data.is_admin is False):
        raise Conflict(
            "You cannot disable your own account or remove your own administrator role; "
            "another administrator can.",
            code="cannot_change_self",
        )
    if data.is_admin is not None:
        user.is_admin = data.is_admin
    if data.disabled is not None:
        user.disabled_at = (user.disabled_at or utcnow()) if data.disabled else None
    generated = security.generate_password() if data.generate_password else None
    if data.password is not None or generated is not None:
        if data.password is not None and generated is not None:
            raise BadRequest(
                "Give a password or ask for a generated one, not both.", code="two_passwords"
            )
        await set_password(db, user, generated or data.password or "")
        user.must_change_password = generated is not None
    if "storage_quota_mb" in data.model_fields_set:
        user.storage_quota_mb = data.storage_quota_mb
    await db.flush()
    return user, generated


async def create_user(db: AsyncSession, data: UserCreate) -> tuple[User, str | None]:
    """A new account with the given password, or a generated one (returned, shown once) that
    they must change at their first login."""
    generated = None if data.password else security.generate_password()
    user = User(
        email=data.email,
        password_hash=await security.hash_password(data.password or generated or ""),
        is_admin=data.is_admin,
        must_change_password=generated is not None,
    )
    db.add(user)
    try:
        async with db.begin_nested():
            await db.flush()
    except IntegrityError:
        raise Conflict(
            f"A user with email {data.email} already exists.", code="email_taken"
        ) from None
    return user, generated


async def create_api_token(
    db: AsyncSession, user: User, data: ApiTokenCreate
) -> tuple[ApiToken, str]:
    secret = security.new_api_token()
    token = ApiToken(
        user_id=user.id,
        name=data.name,
        token_hash=security.hash_token(secret),
        prefix=secret[:10],
    )
    db.add(token)
    await db.flush()
    return token, secret


async def list_api_tokens(
    db: AsyncSession, user: User, limit: int, offset: int
) -> tuple[list[ApiToken], int]:
    query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.created_at.desc())
    return await paginate(db, query, limit, offset)


async def revoke_api_token(db: AsyncSession, user: User, token_id: uuid.UUID) -> None:
    token = await db.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound("No such API token.")
    await db.delete(token)


async def revoke_all_api_tokens(db: AsyncSession, user: User) -> int:
    """Revoke every API token of the user. Returns how many there were."""
    result = await db.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    return int(getattr(result, "rowcount", 0) or 0)


async def get_user(db: AsyncSession, user_id: uuid.UUID) -> User:
    user = await db.get(User, user_id)
    if user is None:
        raise NotFound("No such user.", code="user_not_found")
    return user


async def ensure_admin(db: AsyncSession, email: str | None, password: str | None) -> None:
    """Create the first admin when there are no users yet.

    Without ADMIN_EMAIL/ADMIN_PASSWORD the password is generated and printed once.
    """
    if await db.scalar(select(func.count()).select_from(User)):
        await _check_admin_settings(db, email, password)
        return
    generated = password is None
    email = normalise_email(email or "admin@example.com")
    password = password or security.generate_password()
    db.add(User(email=email, password_hash=await security.hash_password(password), is_admin=True))
    try:
        await db.commit()
    except IntegrityError:  # another replica created it first
        await db.rollback()
        return
    if generated:
        # print, not log: the one place this password is shown; it must not land in log files.
        print(
            f"\n  Workbench created the first admin user.\n    email:    {email}\n"
            f"    password: {password}\n  It is shown only this once; set ADMIN_EMAIL and "
            "ADMIN_PASSWORD to choose your own.\n",
            flush=True,
        )
    else:
        log.info("created admin user %s", email)


async def _check_admin_settings(db: AsyncSession, email: str | None, password: str | None) -> None:
    """ADMIN_EMAIL/ADMIN_PASSWORD only create the first admin: say so when they no longer
    match, rather than leave someone wondering why the new password answers 401."""
    if not email or not password:
        return
    try:
        normalised = normalise_email(email)
    except ValueError:
        return
    user = (await db.scalars(select(User).where(User.email == normalised))).one_or_none()
    if user is None:
        log.warning(
            "ADMIN_EMAIL %s is not a user here: ADMIN_EMAIL and ADMIN_PASSWORD only create the "
            "first admin, when there are no users yet",
            normalised,
        )
    elif not await security.verify_password(password, user.password_hash):
        log.warning(
            "ADMIN_PASSWORD is not the password of %s: it only sets the first admin's password. "
            "To reset it, run on this machine: workbench admin reset-password %s",
            normalised,
            normalised,
        )

"""Users, logins and API tokens."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import security
from app.auth.schemas import ApiTokenCreate, UserCreate, normalise_email
from app.db import paginate
from app.errors import AppError, Conflict, NotFound, Unauthorized
from app.infra.ratelimit import LoginRateLimit
from app.models import ApiToken, User
from app.models.base import utcnow

log = logging.getLogger(__name__)


class LoginRateLimited(AppError):
    status = 429
    code = "rate_limited"


@dataclass(frozen=True)
class Login:
    token: str
    expires_at: datetime
    user: User


def _wait_sentence(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = -(-seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


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
    """Log in with a password, unless this account or address failed too often lately.

    The attempt is counted before the password is checked, so once the limit is reached
    even the right password is refused until the window ends.

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
        raise LoginRateLimited(
            "Too many failed logins for this account or from this address; "
            f"try again in {_wait_sentence(wait)}.",
            retry_after=wait,
        )
    try:
        normalised = normalise_email(email)
    except ValueError:
        normalised = ""
    user = (await db.scalars(select(User).where(User.email == normalised))).one_or_none()
    if not security.verify_password(password, user.password_hash if user else None) or user is None:
        raise Unauthorized("Wrong email or password.", code="invalid_credentials")
    await limit.succeeded(email, address)
    token, expires = security.create_access_token(user.id, key, ttl)
    return Login(token, expires, user)


async def user_for_token(db: AsyncSession, token: str, key: str) -> User:
    """The user a bearer token (login JWT or API token) belongs to, or Unauthorized."""
    if token.startswith(security.API_TOKEN_PREFIX):
        digest = security.hash_api_token(token)
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
        api_token.last_used_at = utcnow()
        return user
    try:
        user_id = security.read_access_token(token, key)
    except security.TokenExpired:
        raise Unauthorized("Your login has expired; log in again.", code="token_expired") from None
    except security.TokenInvalid:
        raise Unauthorized("This token is not valid.", code="invalid_token") from None
    found = await db.get(User, user_id)
    if found is None:
        raise Unauthorized("This token's user no longer exists.", code="invalid_token")
    return found


async def create_user(db: AsyncSession, data: UserCreate) -> User:
    user = User(
        email=data.email,
        password_hash=security.hash_password(data.password),
        is_admin=data.is_admin,
    )
    db.add(user)
    try:
        async with db.begin_nested():
            await db.flush()
    except IntegrityError:
        raise Conflict(
            f"A user with email {data.email} already exists.", code="email_taken"
        ) from None
    return user


async def create_api_token(
    db: AsyncSession, user: User, data: ApiTokenCreate
) -> tuple[ApiToken, str]:
    secret = security.new_api_token()
    token = ApiToken(
        user_id=user.id,
        name=data.name,
        token_hash=security.hash_api_token(secret),
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


async def ensure_admin(db: AsyncSession, email: str | None, password: str | None) -> None:
    """Create the first admin when there are no users yet.

    Without ADMIN_EMAIL/ADMIN_PASSWORD the password is generated and printed once.
    """
    if await db.scalar(select(func.count()).select_from(User)):
        return
    generated = password is None
    email = normalise_email(email or "admin@example.com")
    password = password or security.generate_password()
    db.add(User(email=email, password_hash=security.hash_password(password), is_admin=True))
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

from __future__ import annotations

import uuid
from datetime import timedelta

from fastapi import APIRouter, Request, Response, status

from app.api.deps import (
    AdminUser,
    CurrentUser,
    DbDep,
    LoginRateLimitDep,
    LoginUser,
    PageDep,
    SettingsDep,
    SignedInUser,
)
from app.auth import service
from app.auth.schemas import (
    ApiTokenCreate,
    ApiTokenCreated,
    ApiTokenOut,
    ListedUserOut,
    LoginRequest,
    LoginResponse,
    PasswordChange,
    UserCreate,
    UserOut,
    UserUpdate,
    UserWithPassword,
)
from app.errors import Forbidden
from app.models import User
from app.schemas import Page

router = APIRouter(tags=["auth"])


@router.post(
    "/auth/login",
    response_model=LoginResponse,
    responses={
        403: {"description": "Password sign-in is switched off (password_login_disabled)"},
        429: {"description": "Too many failed logins; see the Retry-After header"},
    },
)
async def login(
    body: LoginRequest,
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    limit: LoginRateLimitDep,
) -> LoginResponse:
    """Log in; after too many failures from the address (at the account, or at all), 429
    with Retry-After. Failures elsewhere never lock the account. With PASSWORD_LOGIN=false,
    403 password_login_disabled (single sign-on only)."""
    if not settings.PASSWORD_LOGIN:
        how = (
            f"sign in with {settings.OIDC_NAME}" if settings.OIDC_ISSUER else "ask an administrator"
        )
        raise Forbidden(
            f"Signing in with a password is switched off here; {how}.",
            code="password_login_disabled",
        )
    ttl = timedelta(minutes=settings.ACCESS_TOKEN_TTL_MINUTES)
    result = await service.authenticate(
        db,
        body.email,
        body.password,
        settings.signing_key,
        ttl,
        limit=limit,
        # The peer as the server sees it: X-Forwarded-For replaces it only for the proxies
        # named in TRUSTED_PROXIES (app/api/forwarded.py).
        address=request.client.host if request.client else None,
    )
    return LoginResponse(
        access_token=result.token,
        expires_at=result.expires_at,
        user=UserOut.model_validate(result.user),
    )


@router.get("/auth/me", response_model=UserOut)
async def me(user: SignedInUser) -> UserOut:
    """Who you are (also while you must change your password: `must_change_password`)."""
    return UserOut.model_validate(user)


@router.post(
    "/auth/tokens",
    response_model=ApiTokenCreated,
    status_code=status.HTTP_201_CREATED,
    responses={403: {"description": "Asked with an API token, not a login (login_required)"}},
)
async def create_token(body: ApiTokenCreate, db: DbDep, user: LoginUser) -> ApiTokenCreated:
    """Make an API token (shown once). Only with a login token: an API token cannot make
    more of itself."""
    token, secret = await service.create_api_token(db, user, body)
    return ApiTokenCreated(id=token.id, name=token.name, token=secret, created_at=token.created_at)


@router.get("/auth/tokens", response_model=Page[ApiTokenOut])
async def list_tokens(db: DbDep, user: CurrentUser, page: PageDep) -> Page[ApiTokenOut]:
    items, total = await service.list_api_tokens(db, user, page.limit, page.offset)
    return Page(items=[ApiTokenOut.model_validate(t) for t in items], total=total)


@router.delete("/auth/tokens/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_token(token_id: uuid.UUID, db: DbDep, user: CurrentUser) -> Response:
    await service.revoke_api_token(db, user, token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/auth/password",
    response_model=LoginResponse,
    responses={400: {"description": "The current password is not right (code wrong_password)"}},
)
async def change_password(
    body: PasswordChange, db: DbDep, user: SignedInUser, settings: SettingsDep
) -> LoginResponse:
    """Change your own password. Every login of yours ends, this one included (the answer
    carries a new login token), and every API token of yours is revoked."""
    ttl = timedelta(minutes=settings.ACCESS_TOKEN_TTL_MINUTES)
    result = await service.change_password(
        db, user, body.current_password, body.new_password, settings.signing_key, ttl
    )
    return LoginResponse(
        access_token=result.token,
        expires_at=result.expires_at,
        user=UserOut.model_validate(result.user),
    )


users = APIRouter(tags=["users"])


@users.post("/users", response_model=UserWithPassword, status_code=status.HTTP_201_CREATED)
async def create_user(body: UserCreate, db: DbDep, _: AdminUser) -> UserWithPassword:
    """Administrators only. Without a password, one is generated (in this answer only) and
    the user must change it at their first login; an invite (POST /invites) lets them
    choose their own instead."""
    user, generated = await service.create_user(db, body)
    return _with_password(user, generated)


def _with_password(user: User, generated: str | None) -> UserWithPassword:
    return UserWithPassword.model_validate(
        {**UserOut.model_validate(user).model_dump(), "generated_password": generated}
    )


@users.get("/users", response_model=Page[ListedUserOut])
async def list_users(db: DbDep, _: AdminUser, page: PageDep) -> Page[ListedUserOut]:
    """Administrators only: every user, oldest first, with the projects each is a member of."""
    items, total = await service.list_users(db, page.limit, page.offset)
    projects = await service.projects_of(db, [u.id for u in items])
    listed = [
        ListedUserOut.model_validate(
            {
                **UserOut.model_validate(u).model_dump(),
                "projects": [
                    {"id": p.id, "name": p.name, "role": role} for p, role in projects.get(u.id, [])
                ],
            }
        )
        for u in items
    ]
    return Page(items=listed, total=total)


@users.patch(
    "/users/{user_id}",
    response_model=UserWithPassword,
    responses={409: {"description": "Not on your own account (code cannot_change_self)"}},
)
async def update_user(
    user_id: uuid.UUID, body: UserUpdate, db: DbDep, admin: AdminUser
) -> UserWithPassword:
    """Administrators only: make or unmake an administrator, disable or enable an account,
    or set a new password, typed or generated (`generate_password`: shown once, to be
    changed at their next login); either ends that user's logins and revokes their API
    tokens."""
    user, generated = await service.update_user(db, admin, user_id, body)
    return _with_password(user, generated)


@users.get(
    "/users/{user_id}/tokens",
    response_model=Page[ApiTokenOut],
    responses={404: {"description": "No such user (user_not_found)"}},
)
async def list_user_tokens(
    user_id: uuid.UUID, db: DbDep, _: AdminUser, page: PageDep
) -> Page[ApiTokenOut]:
    """Administrators only: a user's API tokens (never their secrets), newest first."""
    user = await service.get_user(db, user_id)
    items, total = await service.list_api_tokens(db, user, page.limit, page.offset)
    return Page(items=[ApiTokenOut.model_validate(t) for t in items], total=total)


@users.delete(
    "/users/{user_id}/tokens",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={404: {"description": "No such user (user_not_found)"}},
)
async def revoke_user_tokens(user_id: uuid.UUID, db: DbDep, _: AdminUser) -> Response:
    """Administrators only: revoke every API token of a user, leaving the account enabled
    and its logins as they are."""
    await service.revoke_all_api_tokens(db, await service.get_user(db, user_id))
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@users.delete(
    "/users/{user_id}/tokens/{token_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={404: {"description": "No such user, or no such token of theirs"}},
)
async def revoke_user_token(
    user_id: uuid.UUID, token_id: uuid.UUID, db: DbDep, _: AdminUser
) -> Response:
    """Administrators only: revoke one API token of a user."""
    await service.revoke_api_token(db, await service.get_user(db, user_id), token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

from __future__ import annotations

import uuid
from datetime import timedelta

from fastapi import APIRouter, Response, status

from app.api.deps import AdminUser, CurrentUser, DbDep, PageDep, SettingsDep
from app.auth import service
from app.auth.schemas import (
    ApiTokenCreate,
    ApiTokenCreated,
    ApiTokenOut,
    LoginRequest,
    LoginResponse,
    UserCreate,
    UserOut,
)
from app.schemas import Page

router = APIRouter(tags=["auth"])


@router.post("/auth/login", response_model=LoginResponse)
async def login(body: LoginRequest, db: DbDep, settings: SettingsDep) -> LoginResponse:
    ttl = timedelta(minutes=settings.ACCESS_TOKEN_TTL_MINUTES)
    result = await service.authenticate(db, body.email, body.password, settings.signing_key, ttl)
    return LoginResponse(
        access_token=result.token,
        expires_at=result.expires_at,
        user=UserOut.model_validate(result.user),
    )


@router.get("/auth/me", response_model=UserOut)
async def me(user: CurrentUser) -> UserOut:
    return UserOut.model_validate(user)


@router.post("/auth/tokens", response_model=ApiTokenCreated, status_code=status.HTTP_201_CREATED)
async def create_token(body: ApiTokenCreate, db: DbDep, user: CurrentUser) -> ApiTokenCreated:
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


@router.post("/users", response_model=UserOut, status_code=status.HTTP_201_CREATED, tags=["users"])
async def create_user(body: UserCreate, db: DbDep, _: AdminUser) -> UserOut:
    return UserOut.model_validate(await service.create_user(db, body))

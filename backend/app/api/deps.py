"""Request dependencies: settings, the database session, storage, the caller, owned resources."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, TypeVar

from fastapi import Depends, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import security
from app.auth import service as auth_service
from app.config import Settings
from app.db import request_session
from app.errors import Conflict, Forbidden, ServiceUnavailable, Unauthorized
from app.files import service as files_service
from app.files.preview_process import PreviewsBusy, preview_owner
from app.infra.locks import RedisSessionLocks, SessionLocks
from app.infra.ratelimit import (
    ADDRESS_ALLOWANCE_FACTOR,
    InviteRateLimit,
    LoginRateLimit,
    SharedLinkRateLimit,
    UserActionRateLimit,
    WindowCounters,
    create_window_counters,
    deployment_namespace,
)
from app.infra.storage import ObjectStorage
from app.models import File, Project, Session, User
from app.ownership import Role, require, role_in, still_reads_session
from app.projects import service as projects_service
from app.runs.sandboxes import SandboxPool
from app.sessions import service as sessions_service


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_db(request: Request) -> AsyncIterator[AsyncSession]:
    async for session in request_session(request.app.state.session_factory):
        yield session


def get_storage(request: Request) -> ObjectStorage:
    storage: ObjectStorage = request.app.state.storage
    return storage


def get_locks(request: Request) -> SessionLocks:
    locks: SessionLocks = request.app.state.locks
    return locks


def get_sandboxes(request: Request) -> SandboxPool:
    sandboxes: SandboxPool = request.app.state.sandboxes
    return sandboxes


def _window_counters(request: Request) -> WindowCounters:
    """Counters of attempts, in Redis through the session locks' client when they use Redis
    (so every replica shares the counts and the lifespan closes the client), in this
    process otherwise."""
    settings: Settings = request.app.state.settings
    locks: SessionLocks = request.app.state.locks
    return create_window_counters(
        locks.redis if isinstance(locks, RedisSessionLocks) else None,
        deployment_namespace(settings.database_url),
    )


def get_login_rate_limit(request: Request) -> LoginRateLimit:
    """The app's login rate limit, made on first use."""
    state = request.app.state
    limit: LoginRateLimit | None = getattr(state, "login_rate_limit", None)
    if limit is None:
        settings: Settings = state.settings
        limit = LoginRateLimit(
            _window_counters(request), settings.LOGIN_MAX_FAILURES, settings.LOGIN_WINDOW_SECONDS
        )
        state.login_rate_limit = limit
    return limit


_Limit = TypeVar("_Limit", SharedLinkRateLimit, InviteRateLimit)


def _per_address_limit(request: Request, name: str, kind: type[_Limit]) -> _Limit:
    """The app's limit `name` on tokens that open nothing, made on first use: an address may
    try as many as it may fail logins across accounts, in the same window."""
    state = request.app.state
    limit: _Limit | None = getattr(state, name, None)
    if limit is None:
        settings: Settings = state.settings
        limit = kind(
            _window_counters(request),
            settings.LOGIN_MAX_FAILURES * ADDRESS_ALLOWANCE_FACTOR,
            settings.LOGIN_WINDOW_SECONDS,
        )
        setattr(state, name, limit)
    return limit


def get_shared_link_rate_limit(request: Request) -> SharedLinkRateLimit:
    """The limit on shared links that open nothing."""
    return _per_address_limit(request, "shared_link_rate_limit", SharedLinkRateLimit)


def get_invite_rate_limit(request: Request) -> InviteRateLimit:
    """The limit on invite tokens that accept nothing."""
    return _per_address_limit(request, "invite_rate_limit", InviteRateLimit)


def get_user_action_rate_limit(request: Request) -> UserActionRateLimit:
    """The app's per-user limit on costly actions (checks and additions of sources), made on
    first use; each action's limit per minute is a setting, read at each attempt."""
    state = request.app.state
    limit: UserActionRateLimit | None = getattr(state, "user_action_rate_limit", None)
    if limit is None:
        limit = UserActionRateLimit(_window_counters(request))
        state.user_action_rate_limit = limit
    return limit


SettingsDep = Annotated[Settings, Depends(get_settings)]
# scope="function": the transaction commits before the response is sent, never after.
DbDep = Annotated[AsyncSession, Depends(get_db, scope="function")]
StorageDep = Annotated[ObjectStorage, Depends(get_storage)]
LocksDep = Annotated[SessionLocks, Depends(get_locks)]
SandboxesDep = Annotated[SandboxPool, Depends(get_sandboxes)]
LoginRateLimitDep = Annotated[LoginRateLimit, Depends(get_login_rate_limit)]
SharedLinkRateLimitDep = Annotated[SharedLinkRateLimit, Depends(get_shared_link_rate_limit)]
InviteRateLimitDep = Annotated[InviteRateLimit, Depends(get_invite_rate_limit)]
UserActionRateLimitDep = Annotated[UserActionRateLimit, Depends(get_user_action_rate_limit)]


async def refuse_busy(locks: SessionLocks, session_ids: list[uuid.UUID], what: str) -> None:
    """409 when any of these sessions is answering a question (its lock is held)."""
    for session_id in session_ids:
        if await locks.holder(str(session_id)) is not None:
            raise Conflict(
                f"{what} is answering a question; stop it before deleting.", code="session_busy"
            )


_bearer = HTTPBearer(auto_error=False, description="A login token or an API token")
# The same, for a route that keeps the caller's token (a stream that rechecks it).
bearer = _bearer


async def signed_in_user(
    db: DbDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    """The caller, even one who must still change the password an administrator gave them
    (only /auth/me and /auth/password take this)."""
    if credentials is None:
        raise Unauthorized("Log in first: this needs an Authorization: Bearer token.")
    return await auth_service.user_for_token(db, credentials.credentials, settings.signing_key)


SignedInUser = Annotated[User, Depends(signed_in_user)]

PASSWORD_CHANGE_REQUIRED = (
    "Choose your own password first: an administrator set this one for you (POST /auth/password)."
)


async def current_user(user: SignedInUser) -> User:
    """The caller, once they chose their own password (403 password_change_required
    before: a password an administrator saw is not the user's secret)."""
    if user.must_change_password:
        raise Forbidden(PASSWORD_CHANGE_REQUIRED, code="password_change_required")
    return user


CurrentUser = Annotated[User, Depends(current_user)]


async def login_user(
    user: CurrentUser,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    """The caller, when they came with a login token (they typed their password), not an
    API token: a leaked API token must not be able to make itself new ones."""
    if credentials is not None and credentials.credentials.startswith(security.API_TOKEN_PREFIX):
        raise Forbidden(
            "An API token cannot do this: log in with your email and password "
            "(in the browser, or with `workbench login`).",
            code="login_required",
        )
    return user


LoginUser = Annotated[User, Depends(login_user)]


async def admin_user(user: CurrentUser) -> User:
    if not user.is_admin:
        raise Forbidden("Only an administrator can do this.", code="admin_only")
    return user


AdminUser = Annotated[User, Depends(admin_user)]


@contextmanager
def previews_of(user: User) -> Iterator[None]:
    """Previews computed inside this block take their turns as `user`'s (a fair share of
    the preview slots); a full queue answers 503 server_busy with Retry-After."""
    with preview_owner(str(user.id)):
        try:
            yield
        except PreviewsBusy as exc:
            raise ServiceUnavailable(
                str(exc), code="server_busy", retry_after=exc.retry_after
            ) from None


def needed(request: Request) -> Role:
    """The role a request needs in the project of what it names: reading needs a viewer,
    anything else an editor. Routes that need an owner take the Owner… dependencies;
    these are the only places where access is decided (app.ownership has the rule)."""
    return Role.viewer if request.method in ("GET", "HEAD") else Role.editor


NeededRole = Annotated[Role, Depends(needed)]


async def owned_project(
    project_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> Project:
    return await projects_service.get_owned(db, user, project_id, need)


async def member_project(project_id: uuid.UUID, db: DbDep, user: CurrentUser) -> Project:
    return await projects_service.get_owned(db, user, project_id, Role.viewer)


async def owner_project(project_id: uuid.UUID, db: DbDep, user: CurrentUser) -> Project:
    return await projects_service.get_owned(db, user, project_id, Role.owner)


async def owned_file(file_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole) -> File:
    return await files_service.get_owned(db, user, file_id, need)


async def owned_session(
    session_id: uuid.UUID, db: DbDep, user: CurrentUser, need: NeededRole
) -> Session:
    return await sessions_service.get_owned(db, user, session_id, need)


async def require_role(db: AsyncSession, user: User, project_id: uuid.UUID, need: Role) -> None:
    """For a part of a request that needs more than the route does (a budget, a source's
    password): 403 forbidden_role unless the caller has `need` in the project."""
    require(await role_in(db, user, project_id) or Role.viewer, need)


# A project (file, session) of the caller's: readable by any member for GET and HEAD,
# changeable by an editor or an owner otherwise; OwnerProject: by an owner only.
OwnedProject = Annotated[Project, Depends(owned_project)]
OwnerProject = Annotated[Project, Depends(owner_project)]
# Any member's, whatever the method (a member leaving the project).
MemberProject = Annotated[Project, Depends(member_project)]
OwnedFile = Annotated[File, Depends(owned_file)]
OwnedSession = Annotated[Session, Depends(owned_session)]


class Pagination:
    def __init__(
        self,
        limit: Annotated[int, Query(ge=1, le=500, description="How many items at most")] = 50,
        offset: Annotated[int, Query(ge=0, description="How many items to skip")] = 0,
    ):
        self.limit = limit
        self.offset = offset


PageDep = Annotated[Pagination, Depends()]


def stream_reader(
    request: Request, user: User, session_id: uuid.UUID
) -> Callable[[], Awaitable[bool]]:
    """What a live event stream asks now and then: may this user still read the session?
    (Each check takes a connection for one query and gives it back.)"""
    factory = request.app.state.session_factory

    async def allowed() -> bool:
        async with factory() as db:
            return await still_reads_session(db, user.id, session_id)

    return allowed

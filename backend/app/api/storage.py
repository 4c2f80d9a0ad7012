"""Storage usage against quotas: a project's, your own, and (for administrators) a user's."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from app.api.deps import AdminUser, CurrentUser, DbDep, MemberProject, SettingsDep
from app.auth import service as auth_service
from app.quotas import guard
from app.quotas.schemas import StorageUsageOut

router = APIRouter(tags=["storage"])


@router.get("/projects/{project_id}/usage", response_model=StorageUsageOut)
async def project_usage(
    project: MemberProject, db: DbDep, settings: SettingsDep
) -> StorageUsageOut:
    """What the project keeps in storage, whoever stored it, against PROJECT_STORAGE_QUOTA_MB
    (any member)."""
    used = await guard.project_usage(db, settings, project.id)
    return StorageUsageOut.model_validate(used)


@router.get("/auth/me/usage", response_model=StorageUsageOut)
async def my_usage(user: CurrentUser, db: DbDep, settings: SettingsDep) -> StorageUsageOut:
    """What you keep in storage, in every project, against your quota."""
    return StorageUsageOut.model_validate(await guard.user_usage(db, settings, user))


@router.get("/users/{user_id}/usage", response_model=StorageUsageOut)
async def user_usage(
    user_id: uuid.UUID, db: DbDep, settings: SettingsDep, _: AdminUser
) -> StorageUsageOut:
    """Administrators only: what a user keeps in storage, against their quota."""
    user = await auth_service.get_user(db, user_id)
    return StorageUsageOut.model_validate(await guard.user_usage(db, settings, user))

"""The demo project (app.demo): opened from the no-model home, once per user."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from pydantic import BaseModel, Field

from app.api.deps import CurrentUser, DbDep, SettingsDep, StorageDep
from app.demo.service import open_demo

router = APIRouter(tags=["demo"])


class DemoOut(BaseModel):
    project_id: uuid.UUID
    session_id: uuid.UUID = Field(description="Its recorded session (replayable)")
    created: bool = Field(description="Made now (false: the user's demo was there already)")


@router.post("/demo", response_model=DemoOut)
async def open_demo_project(
    db: DbDep, storage: StorageDep, settings: SettingsDep, user: CurrentUser
) -> DemoOut:
    """Open the user's demo project: a small dataset of its own and a recorded session to
    replay; made on the first call, the same one on every later call."""
    project, session, created = await open_demo(db, storage, settings, user)
    return DemoOut(project_id=project.id, session_id=session.id, created=created)

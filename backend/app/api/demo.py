"""The demo project (app.demo): opened from the no-model home, once per user."""

from __future__ import annotations

import asyncio
import uuid

from fastapi import APIRouter
from pydantic import BaseModel, Field

from app.api.deps import CurrentUser, DbDep, LocksDep, SettingsDep, StorageDep
from app.demo.service import open_demo
from app.errors import ServiceUnavailable

# Making a demo takes a moment (its dataset is read, its recording loaded): a second call of
# the same user meanwhile waits for the first (one demo each, on any replica), this long.
_MAKING_SECONDS = 60.0
_WAIT_SECONDS = 15.0

router = APIRouter(tags=["demo"])


class DemoOut(BaseModel):
    project_id: uuid.UUID
    session_id: uuid.UUID = Field(description="Its recorded session (replayable)")
    created: bool = Field(description="Made now (false: the user's demo was there already)")


@router.post("/demo", response_model=DemoOut)
async def open_demo_project(
    db: DbDep, storage: StorageDep, settings: SettingsDep, locks: LocksDep, user: CurrentUser
) -> DemoOut:
    """Open the user's demo project: a small dataset of its own and a recorded session to
    replay; made on the first call, the same one on every later call (two calls at once make
    one: the second waits for the first)."""
    key = f"demo:{user.id}"
    token = await locks.acquire(key, _MAKING_SECONDS)
    waited = 0.0
    while token is None:
        if waited >= _WAIT_SECONDS:
            raise ServiceUnavailable(
                "Your demo project is still being made: try again in a moment.",
                code="demo_being_made",
                retry_after=5,
            )
        await asyncio.sleep(0.25)
        waited += 0.25
        token = await locks.acquire(key, _MAKING_SECONDS)
    try:
        project, session, created = await open_demo(db, storage, settings, user)
        # Committed before the lock goes: the next call must see the demo just made (the
        # request's own commit comes only after this returns).
        await db.commit()
    finally:
        await locks.release(key, token)
    return DemoOut(project_id=project.id, session_id=session.id, created=created)

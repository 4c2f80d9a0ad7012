"""What the browser needs to know about this installation: can questions be answered now."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter

from app.api.deps import CurrentUser, SandboxesDep
from app.runs.schemas import SandboxStatusOut

router = APIRouter(tags=["system"])


@router.get("/sandbox", response_model=SandboxStatusOut)
async def sandbox_status(_: CurrentUser, sandboxes: SandboxesDep) -> SandboxStatusOut:
    """Whether analysis code can run and how it is isolated (the browser shows a banner)."""
    return SandboxStatusOut.model_validate(dataclasses.asdict(await sandboxes.status()))

"""Liveness and readiness, at the root (outside /api/v1) where load balancers look."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

router = APIRouter(tags=["health"])

CHECK_TIMEOUT_SECONDS = 3.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


async def _check(probe: Callable[[], Awaitable[object]]) -> str:
    try:
        await asyncio.wait_for(probe(), CHECK_TIMEOUT_SECONDS)
    except TimeoutError:
        return f"error: no answer within {CHECK_TIMEOUT_SECONDS:g} s"
    except Exception as exc:
        return f"error: {type(exc).__name__}: {str(exc)[:200]}"
    return "ok"


@router.get("/readyz", responses={503: {"description": "A backing service is down"}})
async def readyz(request: Request) -> JSONResponse:
    state = request.app.state

    async def database() -> None:
        async with state.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))

    names = ("database", "locks", "storage")
    results = await asyncio.gather(
        _check(database), _check(state.locks.ping), _check(state.storage.ping)
    )
    checks = dict(zip(names, results, strict=True))
    backends = {
        "database": state.engine.dialect.name,
        "locks": state.locks.name,
        "events": state.events.name,
        "storage": state.storage.name,
    }
    # Reported, not required: without a sandbox the rest of the app still works, and
    # questions answer 503 sandbox_unavailable with the same cause.
    sandbox = dataclasses.asdict(await state.sandboxes.status())
    failed = [name for name, result in checks.items() if result != "ok"]
    if failed:
        body = {
            "status": "unavailable",
            "detail": "Not ready: " + ", ".join(f"{n} ({checks[n]})" for n in failed),
            "code": "service_unavailable",
            "checks": checks,
            "backends": backends,
        }
        return JSONResponse({**body, "sandbox": sandbox}, status_code=503)
    body = {"status": "ok", "checks": checks, "backends": backends, "sandbox": sandbox}
    return JSONResponse(body)

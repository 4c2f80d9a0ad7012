"""The browser app: the built SPA from frontend/dist, with deep links falling back to index.html."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from app.errors import NotFound

SPA_DIR = Path(__file__).resolve().parents[2] / "frontend" / "dist"

_NO_SPA_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Workbench</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem}
code{background:#f2f2f2;padding:.1rem .3rem;border-radius:3px}
</style></head>
<body><h1>Workbench</h1>
<p>The API is running at <code>/api/v1</code>
(<a href="/api/v1/docs">interactive documentation</a>, <a href="/readyz">readiness</a>).</p>
<p>The browser app has not been built in this checkout (no <code>frontend/dist</code>).</p>
</body></html>"""


def mount_spa(app: FastAPI, spa_dir: Path = SPA_DIR) -> None:
    spa_dir = spa_dir.resolve()
    index = spa_dir / "index.html"
    if (spa_dir / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=spa_dir / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def spa(path: str, request: Request) -> FileResponse | HTMLResponse:
        if path.startswith(("api/", "assets/")) or path == "api":
            raise NotFound("No such endpoint.")
        if not index.exists():
            return HTMLResponse(_NO_SPA_PAGE)
        candidate = (spa_dir / path).resolve()
        # Files at the top of dist/ (favicon, robots.txt); anything else is a client route.
        if path and candidate.parent == spa_dir and await asyncio.to_thread(candidate.is_file):
            return FileResponse(candidate)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

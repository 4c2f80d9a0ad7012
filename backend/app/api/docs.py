"""The API's documentation pages, Swagger UI and ReDoc, with their assets served from here.

FastAPI's own pages load their scripts from a CDN, which a self-hosted workbench without
internet cannot reach: the same pages are built here on the assets that the
`fastapi-offline` package ships (Swagger UI and ReDoc bundles), served from `/api/v1/docs/`.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from app.errors import NotFound

ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}
TITLE = "Workbench API"


def docs_router(prefix: str) -> APIRouter:
    """The pages at `{prefix}/docs` (Swagger UI) and `{prefix}/redoc`, and their assets."""
    router = APIRouter(include_in_schema=False)
    openapi_url = f"{prefix}/openapi.json"
    assets = f"{prefix}/docs/assets"

    @router.get(f"{prefix}/docs", response_class=HTMLResponse)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{TITLE} · Swagger UI",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon.png",
            swagger_ui_parameters={"persistAuthorization": False},
        )

    @router.get(f"{prefix}/redoc", response_class=HTMLResponse)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{TITLE} · ReDoc",
            redoc_js_url=f"{assets}/redoc.standalone.js",
            redoc_favicon_url=f"{assets}/favicon.png",
            with_google_fonts=False,
        )

    @router.get(f"{assets}/{{name}}")
    async def asset(name: str) -> FileResponse:
        media_type = ASSETS.get(name)
        if media_type is None:
            raise NotFound("No such documentation asset.", code="not_found")
        return FileResponse(
            ASSETS_DIR / name,
            media_type=media_type,
            headers={"Cache-Control": "public, max-age=86400"},
        )

    return router

"""The API's documentation reads with no internet: its pages and assets come from the
backend itself, and a real browser cut off from everything but loopback renders them."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.support.browser import OFFLINE, dump_dom
from tests.support.server import LiveServer


def rendered(url: str) -> str:
    return dump_dom(url, budget_seconds=30, timeout=240, flags=[OFFLINE])


@pytest.mark.parametrize("page", ["docs", "redoc"])
def test_the_docs_pages_load_only_what_the_backend_serves(live: LiveServer, page: str) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as client:
        html = client.get(f"/api/v1/{page}").text
        urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", html)
        assert urls, html
        for url in urls:
            assert url.startswith("/api/v1/"), f"{url} is not served by the backend"
            response = client.get(url)
            assert response.status_code == 200, url
        assert client.get("/api/v1/docs/assets/..%2F..%2F..%2Fmain.py").status_code == 404
        assert client.get("/api/v1/docs/assets/app.py").status_code == 404


def test_swagger_ui_renders_the_api_with_no_internet(live: LiveServer) -> None:
    dom = rendered(f"{live.url}/api/v1/docs")
    # The operations of the API, drawn by Swagger UI from the local bundle.
    assert 'class="swagger-ui' in dom
    assert "/api/v1/sessions/{session_id}/export" in dom
    assert "opblock" in dom


def test_redoc_renders_the_api_with_no_internet(live: LiveServer) -> None:
    dom = rendered(f"{live.url}/api/v1/redoc")
    assert "Workbench" in dom and "Export Session" in dom

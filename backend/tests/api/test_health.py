from __future__ import annotations

import httpx


def test_health_and_readiness(live) -> None:  # type: ignore[no-untyped-def]
    assert httpx.get(f"{live.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{live.url}/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body["checks"] == {"database": "ok", "locks": "ok", "storage": "ok"}
    expected = {"database": "sqlite", "locks": "in-process", "storage": "local"}
    if live.settings.DATABASE_URL:
        expected = {"database": "postgresql", "locks": "redis", "storage": "s3"}
    assert body["backends"] == expected


def test_the_root_serves_a_page_and_unknown_api_paths_are_json_404(live) -> None:  # type: ignore[no-untyped-def]
    page = httpx.get(f"{live.url}/")
    assert page.status_code == 200 and "Workbench" in page.text
    missing = httpx.get(f"{live.url}/api/v1/nothing-here")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    schema = httpx.get(f"{live.url}/api/v1/openapi.json").json()
    assert "/api/v1/projects/{project_id}/files" in schema["paths"]
    upload = schema["paths"]["/api/v1/projects/{project_id}/files"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]

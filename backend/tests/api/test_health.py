from __future__ import annotations

import httpx


def test_health_and_readiness(live) -> None:  # type: ignore[no-untyped-def]
    assert httpx.get(f"{live.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{live.url}/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body["checks"] == {"database": "ok", "locks": "ok", "storage": "ok"}
    expected = {
        "database": "sqlite",
        "locks": "in-process",
        "events": "in-process",
        "storage": "local",
    }
    if live.settings.DATABASE_URL:
        expected = {"database": "postgresql", "locks": "redis", "events": "redis", "storage": "s3"}
    assert body["backends"] == expected
    assert body["sandbox"]["mechanism"] == "bubblewrap"


def test_the_root_serves_a_page_and_unknown_api_paths_are_json_404(live) -> None:  # type: ignore[no-untyped-def]
    page = httpx.get(f"{live.url}/")
    assert page.status_code == 200 and "Workbench" in page.text
    missing = httpx.get(f"{live.url}/api/v1/nothing-here")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    schema = httpx.get(f"{live.url}/api/v1/openapi.json").json()
    assert "/api/v1/projects/{project_id}/files" in schema["paths"]
    upload = schema["paths"]["/api/v1/projects/{project_id}/files"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]


CONTRACT = [
    ("post", "/auth/login"),
    ("get", "/auth/me"),
    ("post", "/auth/tokens"),
    ("get", "/auth/tokens"),
    ("delete", "/auth/tokens/{token_id}"),
    ("post", "/users"),
    ("post", "/projects"),
    ("get", "/projects"),
    ("get", "/projects/{project_id}"),
    ("patch", "/projects/{project_id}"),
    ("delete", "/projects/{project_id}"),
    ("post", "/projects/{project_id}/files"),
    ("get", "/projects/{project_id}/files"),
    ("get", "/files/{file_id}"),
    ("delete", "/files/{file_id}"),
    ("get", "/files/{file_id}/content"),
    ("get", "/files/{file_id}/preview"),
    ("post", "/projects/{project_id}/sessions"),
    ("get", "/projects/{project_id}/sessions"),
    ("get", "/sessions/{session_id}"),
    ("patch", "/sessions/{session_id}"),
    ("delete", "/sessions/{session_id}"),
    ("get", "/sessions/{session_id}/runs"),
    ("get", "/sessions/{session_id}/artifacts"),
    ("get", "/artifacts/{artifact_id}"),
    ("get", "/artifacts/{artifact_id}/content"),
    ("post", "/sessions/{session_id}/query"),
    ("get", "/runs/{run_id}"),
    ("get", "/runs/{run_id}/events"),
    ("post", "/runs/{run_id}/cancel"),
    ("post", "/runs/{run_id}/input"),
    ("post", "/runs/{run_id}/approval"),
    ("get", "/models"),
    ("get", "/sessions/{session_id}/export"),
    ("post", "/auth/password"),
    ("get", "/users"),
    ("patch", "/users/{user_id}"),
    ("get", "/files/{file_id}/versions"),
    ("get", "/files/{file_id}/versions/{version}/content"),
]


def test_the_openapi_document_describes_the_contract(live) -> None:  # type: ignore[no-untyped-def]
    paths = httpx.get(f"{live.url}/api/v1/openapi.json").json()["paths"]
    missing = [(m, p) for m, p in CONTRACT if m not in paths.get(f"/api/v1{p}", {})]
    assert missing == []
    secured = paths["/api/v1/projects"]["get"]
    assert secured["security"] == [{"HTTPBearer": []}]

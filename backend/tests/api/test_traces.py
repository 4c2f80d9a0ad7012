"""Traces over OTLP: a real receiver (OTLP/HTTP, protobuf decoded with opentelemetry-proto)
gets one tree of spans per question, with the GenAI attributes on model calls and no
secret, prompt or question text in any attribute; JSON log lines carry the same ids."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.config import LogFormat
from app.observability import logs
from tests.api.conftest import SALES
from tests.api.test_asking import ask_until_waiting, follow
from tests.api.test_query import READ, ask, finished
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, LLM_KEY, TEST_SECRET, Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.otlp import OtlpReceiver, ReceivedSpan
from tests.support.server import LiveServer

QUESTION = "Which region sold most? (marker-question-5c1e)"
PASSWORD = "alice-password-77aa"
MODEL_SPAN = "chat openai/scripted"


@contextmanager
def traced_server(
    folder: Path, llm: ScriptedLLM, receiver: OtlpReceiver, **overrides: Any
) -> Iterator[LiveServer]:
    """An embedded workbench that sends its traces to `receiver`."""
    settings = stack_settings(
        "embedded",
        folder,
        LLM_API_BASE=llm.api_base,
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
        **overrides,
    )
    live = LiveServer(settings).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def traced(
    tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM, receiver: OtlpReceiver
) -> Iterator[LiveServer]:
    with traced_server(tmp_path_factory.mktemp("data-traced"), llm, receiver) as live:
        yield live


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What the app logs meanwhile, as LOG_FORMAT=json writes it."""
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(logs.JsonLines())
    logger = logging.getLogger("app")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield written
    logger.removeHandler(handler)
    logger.setLevel(level)


def flushed(live: LiveServer, receiver: OtlpReceiver) -> list[ReceivedSpan]:
    assert live.app.state.tracer_provider.force_flush(30_000)
    return list(receiver.spans)


def tree(spans: list[ReceivedSpan], trace_id: str) -> dict[str, ReceivedSpan]:
    return {s.span_id: s for s in spans if s.trace_id == trace_id}


def chain(span: ReceivedSpan, by_id: dict[str, ReceivedSpan]) -> list[str]:
    """The names from a span up to its trace's root."""
    names = [span.name]
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        names.append(span.name)
    return names


def strings(spans: list[ReceivedSpan]) -> str:
    """Every attribute of every span (and of its events), as text."""
    return json.dumps([[s.name, s.attributes, s.events] for s in spans], default=str)


def test_a_question_is_one_tree_of_spans_with_genai_attributes_and_no_secret(
    traced: LiveServer, receiver: OtlpReceiver, llm: ScriptedLLM, json_lines: io.StringIO
) -> None:
    with Api(traced) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        alice = admin.new_user("alice@example.com", PASSWORD)
        project = alice.project()
        assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
        session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
        llm.script(
            code_reply(
                f"{READ}\nimport matplotlib.pyplot as plt\n"
                "plt.bar(df['region'], df['revenue'])\nplt.show()\nprint(len(df))"
            ),
            final_reply("'North sold most.'"),
        )
        assert finished(ask(alice, session["id"], QUESTION))["status"] == "succeeded"
        run = alice.get(f"/sessions/{session['id']}/runs").json()["items"][0]
        token = alice.headers["Authorization"].removeprefix("Bearer ")
    spans = flushed(traced, receiver)

    posts = [s for s in spans if s.name == "POST /api/v1/sessions/{session_id}/query"]
    assert len(posts) == 1
    root = posts[0]
    assert root.kind == "SPAN_KIND_SERVER" and root.attributes["http.route"]
    by_id = tree(spans, root.trace_id)
    assert root.parent_id not in by_id  # the tree's top
    for span in by_id.values():  # one tree: every span leads up to the request's
        assert chain(span, by_id)[-1] == root.name, chain(span, by_id)
    names = [s.name for s in by_id.values()]
    for expected in (
        "admit",
        "invoke_agent workbench",
        "prepare",
        "sandbox",
        "step 1",
        "step 2",
        "execute_tool python_interpreter",
        "artifacts",
        "snapshot",
        "end",
    ):
        assert expected in names, (expected, sorted(set(names)))
    agent = next(s for s in by_id.values() if s.name == "invoke_agent workbench")
    assert agent.attributes["workbench.run.id"] == run["id"]
    assert agent.attributes["gen_ai.conversation.id"] == session["id"]
    assert agent.attributes["workbench.run.status"] == "succeeded"

    calls = [s for s in by_id.values() if s.name == MODEL_SPAN]
    assert len(calls) == 2
    for call in calls:
        assert call.kind == "SPAN_KIND_CLIENT"
        assert chain(call, by_id)[1].startswith("step ")
        assert call.attributes["gen_ai.operation.name"] == "chat"
        assert call.attributes["gen_ai.request.model"] == "openai/scripted"
        assert call.attributes["gen_ai.usage.input_tokens"] > 0
        assert call.attributes["gen_ai.usage.output_tokens"] > 0
        assert call.attributes["gen_ai.response.finish_reasons"] == ["stop"]
        assert "gen_ai.input.messages" not in call.attributes  # OTEL_CAPTURE_CONTENT is off
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in calls) == run["tokens_in"]
    # The model server's HTTP request (httpx's instrumentation), under its model call.
    http = [s for s in by_id.values() if s.kind == "SPAN_KIND_CLIENT" and s.name.startswith("POST")]
    assert http and all(by_id[s.parent_id].name == MODEL_SPAN for s in http)
    for request in http:
        assert request.attributes["http.method"] == "POST"
        assert request.attributes["http.url"] == f"{llm.api_base}/chat/completions"
        assert request.attributes["http.status_code"] == 200
        # No header is captured unless OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_* says so.
        assert not [k for k in request.attributes if ".header." in k], request.attributes
    # The model server is told the trace (W3C traceparent, sampled), each request its span.
    told = sorted((t[:-3], int(t[-2:], 16) & 1) for t in llm.traceparents if t)
    assert told == sorted((f"00-{root.trace_id}-{s.span_id}", 1) for s in http), llm.traceparents
    # The database's statements (SQLAlchemy's instrumentation), within the trace.
    assert any(
        "db.system" in s.attributes or "db.system.name" in s.attributes for s in by_id.values()
    )
    artifacts = next(s for s in by_id.values() if s.name == "artifacts")
    assert chain(artifacts, by_id)[1:3] == ["execute_tool python_interpreter", "step 1"]

    exported = strings(spans)
    for secret in (LLM_KEY, TEST_SECRET, ADMIN_PASSWORD, PASSWORD, token):
        assert secret not in exported
    assert "marker-question-5c1e" not in exported  # no question or prompt text
    assert "North,2026-01" not in exported  # nor the data's rows the prompt shows

    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    of_run = [line for line in lines if line.get("run_id") == run["id"]]
    assert of_run, lines
    assert all(line["session_id"] == session["id"] for line in of_run)
    assert any(line.get("trace_id") == root.trace_id for line in of_run)


def test_a_run_that_goes_on_after_an_answer_links_to_its_first_trace(
    traced: LiveServer, receiver: OtlpReceiver, llm: ScriptedLLM
) -> None:
    with Api(traced) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        project = admin.project()
        assert admin.upload(project["id"], "sales data.csv", SALES).status_code == 201
        session = admin.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
        llm.script(
            code_reply(f"{READ}\nkind = ask_user('Net or gross?')"),
            final_reply("f'Total {kind} revenue is 4490.75.'"),
        )
        asked = ask_until_waiting(admin, session["id"], "What is the revenue?")[-1]
        run_id = asked.data["run_id"]
        assert admin.post(f"/runs/{run_id}/input", json={"answer": "gross"}).status_code == 200
        assert finished(follow(admin, run_id, asked.id))["status"] == "succeeded"
    spans = flushed(traced, receiver)

    parts = [
        s
        for s in spans
        if s.name == "invoke_agent workbench" and s.attributes["workbench.run.id"] == run_id
    ]
    assert len(parts) == 2
    first, then = sorted(parts, key=lambda s: s.start_ns)
    assert first.trace_id != then.trace_id  # the answer's request has a trace of its own
    assert then.attributes["workbench.run.resumed"] is True
    assert then.links == [(first.trace_id, first.span_id)]
    answer = tree(spans, then.trace_id)[then.parent_id]
    assert answer.name == "POST /api/v1/runs/{run_id}/input"


def test_json_log_lines_and_quiet_litellm(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, logging.getLogger("LiteLLM").level)
    try:
        logs.configure("info", LogFormat.json)
        logging.getLogger("LiteLLM").info("chatter a person has no use for")
        logging.getLogger("LiteLLM").warning("a warning worth reading")
        logging.getLogger("app.test").info("plain line")
        written = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("LiteLLM").setLevel(saved[2])
    assert [(w["logger"], w["message"]) for w in written] == [
        ("LiteLLM", "a warning worth reading"),
        ("app.test", "plain line"),
    ]
    assert all(w["level"] in ("info", "warning") and "time" in w for w in written)

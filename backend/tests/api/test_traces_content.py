"""OTEL_CAPTURE_CONTENT=true: the prompts and the model's replies go on model-call spans,
still without a secret; and the scrubber that every exported span goes through."""

from __future__ import annotations

import json
import logging
import urllib.request
from collections.abc import Iterator

import pytest
from opentelemetry.trace import SpanKind

from app.observability.recorder import Recorder
from app.observability.tracing import scrubber
from tests.api.conftest import SALES
from tests.api.test_query import READ, ask, finished, of
from tests.api.test_traces import MODEL_SPAN, flushed, strings, traced_server, tree
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, LLM_KEY, TEST_SECRET, Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.otlp import OtlpReceiver, ReceivedSpan, spans_of
from tests.support.server import LiveServer
from tests.support.sse import Event

QUESTION = "Which region sold most? Use key sk-user-pasted-0a1b2c3d4e (marker-7f3e)"
PASSWORD = "carol-password-31cc"


@pytest.fixture(scope="module")
def capturing(
    tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM, receiver: OtlpReceiver
) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("data-capturing")
    with traced_server(folder, llm, receiver, OTEL_CAPTURE_CONTENT=True) as live:
        yield live


def test_with_capture_on_model_spans_carry_the_prompt_and_reply_but_no_secret(
    capturing: LiveServer, receiver: OtlpReceiver, llm: ScriptedLLM
) -> None:
    with Api(capturing) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        carol = admin.new_user("carol@example.com", PASSWORD)
        project = carol.project()
        assert carol.upload(project["id"], "sales.csv", SALES).status_code == 201
        session = carol.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
        llm.script(
            code_reply(f"{READ}\nprint(df.groupby('region')['revenue'].sum().idxmax())"),
            final_reply("'North sold most (marker-answer-9d2a).'"),
        )
        assert finished(ask(carol, session["id"], QUESTION))["status"] == "succeeded"
        token = carol.headers["Authorization"].removeprefix("Bearer ")
    spans = flushed(capturing, receiver)
    root = next(s for s in spans if s.name == "POST /api/v1/sessions/{session_id}/query")
    calls = [s for s in tree(spans, root.trace_id).values() if s.name == MODEL_SPAN]
    assert len(calls) == 2

    prompt = json.loads(calls[0].attributes["gen_ai.input.messages"])
    said = json.dumps(prompt)
    assert "marker-7f3e" in said  # the question, as the model read it
    assert "sales.csv" in said and "revenue" in said  # and the workspace the prompt shows
    assert "[redacted]" in said and "sk-user-pasted-0a1b2c3d4e" not in said  # a key's shape
    assert "groupby('region')" in calls[0].attributes["gen_ai.output.messages"]
    assert "marker-answer-9d2a" in calls[1].attributes["gen_ai.output.messages"]

    exported = strings(spans)
    for secret in (LLM_KEY, TEST_SECRET, ADMIN_PASSWORD, PASSWORD, token):
        assert secret not in exported


def exported_through(
    scrubber_secrets: list[str], name: str, attributes: dict[str, object]
) -> ReceivedSpan:
    """What a span with this name and these attributes looks like as it is sent."""
    sent: list[bytes] = []
    recorder = Recorder(lambda body: sent.append(body) is None, {}, scrubber(scrubber_secrets))
    tracer = recorder.get_tracer("t")
    with tracer.start_as_current_span(name, attributes=attributes, kind=SpanKind.SERVER):
        pass
    recorder.shutdown()
    (span,) = [span for body in sent for span in spans_of(body)]
    return span


SECRET = "s3cret-signing-value-42"


@pytest.mark.parametrize(
    ("attribute", "value", "left"),
    [
        ("db.statement", f"SELECT '{SECRET}'", "SELECT '[redacted]'"),
        ("note", "Authorization: bEaReR abc.def", "Authorization: [redacted]"),
        ("note", "key KEY-0123456789abc here", "key [redacted] here"),
        ("list", ("ok", f"x{SECRET}x"), ("ok", "x[redacted]x")),
        ("url.full", "https://h:8/p?api_key=zzz#f", "https://h:8/p"),
        ("url.path", "/api/v1/shared/tok", None),
        ("url.query", "token=abc", None),
    ],
)
def test_the_scrubber_removes_secrets_shapes_paths_and_queries(
    attribute: str, value: object, left: object
) -> None:
    span = exported_through([SECRET, "short"], "op", {attribute: value, "n": 3})
    found = span.attributes.get(attribute)
    assert (tuple(found) if isinstance(found, list | tuple) else found) == left
    assert span.attributes["n"] == 3


def test_the_scrubber_cleans_a_span_name_and_passes_a_clean_span_as_it_is() -> None:
    named = exported_through([SECRET], f"GET {SECRET}", {})
    assert named.name == "GET [redacted]"
    clean = {"db.statement": "SELECT users.email FROM users WHERE users.id = ?", "n": 1}
    span = exported_through([SECRET, "short"], "SELECT /data/workbench.db", clean)
    assert span.name == "SELECT /data/workbench.db"
    assert span.attributes == clean
    # A secret under MIN_SECRET_CHARS is not looked for (it would match too much).
    assert exported_through(["short"], "op", {"a": "short"}).attributes == {"a": "short"}


def session_with_sales(api: Api) -> str:
    """A new session of a new project holding sales.csv: its id."""
    project = api.project()
    assert api.upload(project["id"], "sales.csv", SALES).status_code == 201
    return str(api.post(f"/projects/{project['id']}/sessions", json={}).json()["id"])


def how_many_rows(api: Api, session_id: str, llm: ScriptedLLM) -> list[Event]:
    """A two-step question whose answer is "Four rows.": its events."""
    llm.script(code_reply(f"{READ}\nprint(len(df))"), final_reply("'Four rows.'"))
    return ask(api, session_id, "How many rows?")


def test_a_question_sampled_out_sends_no_span_and_is_answered(
    tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0")  # no question traced
    received = OtlpReceiver().start()  # its own: the module's has the other server's spans
    folder = tmp_path_factory.mktemp("data-sampled-out")
    try:
        with (
            traced_server(folder, llm, received) as live,
            Api(live) as anon,
            anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin,
        ):
            answered = finished(how_many_rows(admin, session_with_sales(admin), llm))
            assert answered["status"] == "succeeded"
            assert flushed(live, received) == []  # not the request's, ours, SQL nor HTTP
            # Inside a question not recorded, httpx's hook stays quiet: it puts no trace
            # header on the model's requests (it would, for a span it then drops).
            assert llm.traceparents == [None, None]
            # The pipeline works: a caller's sampled trace is still followed. (Sent with
            # urllib: httpx is instrumented in this process and would put its own header.)
            caller = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
            request = urllib.request.Request(
                f"{live.url}/api/v1/projects",
                headers={"traceparent": caller, "Authorization": admin.headers["Authorization"]},
            )
            with urllib.request.urlopen(request, timeout=30) as listed:
                assert listed.status == 200
            spans = flushed(live, received)
            assert spans and {s.trace_id for s in spans} == {"ab" * 16}
    finally:
        received.stop()


def test_a_collector_that_is_down_costs_no_question_and_is_said_once(
    tmp_path_factory: pytest.TempPathFactory,
    llm: ScriptedLLM,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # each send gives up after 1 s
    # Sent only when flushed: however slow the machine, the spans of each question are
    # still waiting when the test flushes them (the thread would otherwise try first).
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
    nobody = OtlpReceiver()  # never started: nothing answers at its endpoint
    folder = tmp_path_factory.mktemp("data-collector-down")
    with (
        caplog.at_level(logging.INFO, "app.observability.recorder"),
        traced_server(folder, llm, nobody) as live,
        Api(live) as anon,
        anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin,
    ):
        session_id = session_with_sales(admin)
        for _ in range(2):
            events = how_many_rows(admin, session_id, llm)
            assert finished(events)["status"] == "succeeded"
            assert of(events, "final")[0]["answer"] == "Four rows."
            # The spans are lost, and flushing says so rather than hanging.
            assert not live.app.state.tracer_provider.force_flush(30_000)
    said = [
        r
        for r in caplog.records
        if r.levelno >= logging.WARNING
        and (r.name.startswith("opentelemetry.exporter") or r.name == "app.observability.recorder")
    ]
    assert len(said) == 1  # once, not for every batch (nor the exporter's own lines)
    assert "could not be sent to the OTLP endpoint" in said[0].getMessage()
    assert "Connection refused" in caplog.text  # why

"""The span recorder behind OpenTelemetry's API (app/observability/recorder.py): what it
sends, decoded with opentelemetry-proto as a collector decodes it, which spans it records,
and how it behaves when the queue is full or the collector fails."""

from __future__ import annotations

import logging
import time

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from app.observability.recorder import MAX_ATTRIBUTES, Recorder, RequestRooted
from app.observability.tracing import scrubber
from tests.support.otlp import spans_of, value_of

SECRET = "s3cret-signing-value-42"


class Collector:
    """A `send` that keeps what it is given (or fails, while `failing`)."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.failing = False

    def __call__(self, body: bytes) -> bool:
        if self.failing:
            raise ConnectionError("collector down")
        self.bodies.append(body)
        return True

    def requests(self) -> list[ExportTraceServiceRequest]:
        return [ExportTraceServiceRequest.FromString(b) for b in self.bodies]

    def spans(self) -> list[SpanProto]:
        return [
            span
            for request in self.requests()
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


def recorder_for(
    collector: Collector, ratio: float = 1.0, secrets: tuple[str, ...] = (SECRET,)
) -> Recorder:
    return Recorder(collector, {"service.name": "wb-test"}, scrubber(secrets), RequestRooted(ratio))


@pytest.fixture
def collector() -> Collector:
    return Collector()


def attributes_of(span: SpanProto) -> dict[str, object]:
    return {a.key: value_of(a.value) for a in span.attributes}


def test_a_span_is_sent_as_otlp_protobuf_with_every_field(collector: Collector) -> None:
    recorder = recorder_for(collector)
    tracer = recorder.get_tracer("app", "1.2")
    remote = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1))
    linked = SpanContext(0x1234, 0x5678, is_remote=False, trace_flags=TraceFlags(1))
    attributes = {
        "text": "grüße, 数据",
        "yes": True,
        "count": 3,
        "negative": -7,
        "big": 2**62,
        "ratio": 0.25,
        "names": ["a", "b"],
        "sizes": (1, 2, 3),
    }
    started = time.time_ns()
    with tracer.start_as_current_span(
        "POST /q",
        context=trace.set_span_in_context(trace.NonRecordingSpan(remote)),
        kind=SpanKind.SERVER,
        attributes=attributes,
        links=[Link(linked, {"why": "earlier part"})],
    ) as root:
        root.add_event("checkpoint", {"step": 2})
        with recorder.get_tracer("db").start_as_current_span("SELECT", kind=SpanKind.CLIENT):
            pass
        root.set_status(Status(StatusCode.ERROR, "it failed"))
    recorder.shutdown()

    (request,) = collector.requests()
    (resource,) = request.resource_spans
    assert {a.key: value_of(a.value) for a in resource.resource.attributes} == {
        "service.name": "wb-test"
    }
    scopes = {(s.scope.name, s.scope.version): list(s.spans) for s in resource.scope_spans}
    assert set(scopes) == {("app", "1.2"), ("db", "")}
    (server,) = scopes[("app", "1.2")]
    (client,) = scopes[("db", "")]

    assert server.trace_id == (0xABC).to_bytes(16, "big")
    assert server.parent_span_id == (0xDEF).to_bytes(8, "big")
    assert server.flags == 0x300  # its parent is known to be remote
    assert server.name == "POST /q"
    assert server.kind == SpanProto.SPAN_KIND_SERVER
    assert started <= server.start_time_unix_nano <= server.end_time_unix_nano
    assert attributes_of(server) == {**attributes, "names": ["a", "b"], "sizes": [1, 2, 3]}
    assert isinstance(attributes_of(server)["yes"], bool)
    (event,) = server.events
    assert event.name == "checkpoint"
    assert {a.key: value_of(a.value) for a in event.attributes} == {"step": 2}
    (link,) = server.links
    assert (link.trace_id, link.span_id) == (
        (0x1234).to_bytes(16, "big"),
        (0x5678).to_bytes(8, "big"),
    )
    assert {a.key: value_of(a.value) for a in link.attributes} == {"why": "earlier part"}
    assert (server.status.code, server.status.message) == (2, "it failed")

    assert client.trace_id == server.trace_id
    assert client.parent_span_id == server.span_id
    assert client.kind == SpanProto.SPAN_KIND_CLIENT
    assert client.flags == 0x100
    assert server.start_time_unix_nano <= client.start_time_unix_nano
    assert client.end_time_unix_nano <= server.end_time_unix_nano
    assert client.status.code == 0  # unset


def test_a_cached_attribute_keeps_its_type(collector: Collector) -> None:
    recorder = recorder_for(collector)
    tracer = recorder.get_tracer("app")
    with tracer.start_as_current_span("root", kind=SpanKind.SERVER):
        for value in (True, 1, 1.0, "1") * 2:  # the second time, from the cache
            with tracer.start_as_current_span("child", attributes={"v": value}):
                pass
    recorder.shutdown()
    values = [attributes_of(s)["v"] for s in collector.spans() if s.name == "child"]
    assert [(type(v), v) for v in values] == [
        (bool, True), (int, 1), (float, 1.0), (str, "1")
    ] * 2  # fmt: skip


def test_secrets_are_scrubbed_from_every_string_sent(collector: Collector) -> None:
    recorder = recorder_for(collector)
    tracer = recorder.get_tracer("app")
    linked = SpanContext(1, 2, is_remote=False, trace_flags=TraceFlags(1))
    with tracer.start_as_current_span(
        f"GET {SECRET}",
        kind=SpanKind.SERVER,
        attributes={"note": f"x{SECRET}", "url.path": "/shared/tok", "url.full": "http://h/p?k=v"},
        links=[Link(linked, {"why": SECRET})],
    ) as span:
        span.add_event("said", {"text": f"Bearer {SECRET}"})
        span.set_status(StatusCode.ERROR, f"failed with {SECRET}")
    recorder.shutdown()
    body = b"".join(collector.bodies)
    assert SECRET.encode() not in body
    assert b"/shared/tok" not in body and b"k=v" not in body
    (span_,) = collector.spans()
    assert span_.name == "GET [redacted]"
    assert attributes_of(span_) == {"note": "x[redacted]", "url.full": "http://h/p"}
    assert span_.status.message == "failed with [redacted]"


def test_only_requests_start_traces_and_a_child_follows_its_parent(collector: Collector) -> None:
    recorder = recorder_for(collector)
    tracer = recorder.get_tracer("app")
    # Outside any request (a sweeper, a warm-up): nothing recorded, nothing under it.
    with tracer.start_as_current_span("sweep") as outside:
        assert not outside.is_recording()
        with tracer.start_as_current_span("statement") as under:
            assert not under.is_recording()
    with tracer.start_as_current_span("POST /q", kind=SpanKind.SERVER) as request:
        assert request.is_recording()
        with tracer.start_as_current_span("step") as step:
            assert step.get_span_context().trace_id == request.get_span_context().trace_id
    recorder.shutdown()
    assert sorted(s.name for s in collector.spans()) == ["POST /q", "step"]


def test_a_share_of_requests_is_recorded_by_trace_id(collector: Collector) -> None:
    recorder = recorder_for(collector, ratio=0.25)
    tracer = recorder.get_tracer("app")
    recorded = 0
    for _ in range(2000):
        with tracer.start_as_current_span("POST /q", kind=SpanKind.SERVER) as request:
            context = request.get_span_context()
            sampled = bool(context.trace_flags & TraceFlags.SAMPLED)
            assert request.is_recording() == sampled
            # OpenTelemetry's TraceIdRatioBased rule: the trace id's low 64 bits.
            assert sampled == ((context.trace_id & (2**64 - 1)) < 2**62)
            with tracer.start_as_current_span("step") as step:
                assert step.is_recording() == sampled  # a child follows its parent
            recorded += sampled
    recorder.shutdown()
    assert 300 < recorded < 700  # a quarter of 2000, give or take chance
    assert len(collector.spans()) == 2 * recorded


@pytest.mark.parametrize(("ratio", "recorded"), [(0.0, ["sampled"]), (1.0, ["sampled", "not"])])
def test_a_caller_s_trace_is_followed_or_left_to_our_share(
    collector: Collector, ratio: float, recorded: list[str]
) -> None:
    recorder = recorder_for(collector, ratio=ratio)
    tracer = recorder.get_tracer("app")
    for name, flags in (("sampled", TraceFlags(1)), ("not", TraceFlags(0))):
        caller = SpanContext(0x77 + flags, 0x88, is_remote=True, trace_flags=flags)
        token = otel_context.attach(trace.set_span_in_context(trace.NonRecordingSpan(caller)))
        try:
            with tracer.start_as_current_span(name, kind=SpanKind.SERVER):
                pass
        finally:
            otel_context.detach(token)
    recorder.shutdown()
    # A caller that records gets its span, in its trace; one that does not is left to our
    # own share (none of them, or every one).
    sent = collector.spans()
    assert [s.name for s in sent] == recorded
    assert all(s.trace_id == (0x77 + (s.name == "sampled")).to_bytes(16, "big") for s in sent)


def test_an_exception_out_of_a_span_is_recorded_on_it(collector: Collector) -> None:
    recorder = recorder_for(collector)
    tracer = recorder.get_tracer("app")
    with (
        pytest.raises(ValueError, match="boom"),
        tracer.start_as_current_span("POST /q", kind=SpanKind.SERVER),
    ):
        raise ValueError("boom")
    recorder.shutdown()
    (span,) = collector.spans()
    assert (span.status.code, span.status.message) == (2, "ValueError: boom")
    (event,) = span.events
    said = {a.key: value_of(a.value) for a in event.attributes}
    assert event.name == "exception"
    assert said["exception.type"] == "ValueError" and said["exception.message"] == "boom"
    assert 'raise ValueError("boom")' in str(said["exception.stacktrace"])
    assert trace.get_current_span() is trace.INVALID_SPAN  # the context was restored


def test_a_span_used_as_a_context_manager_ends_with_its_exception(collector: Collector) -> None:
    recorder = recorder_for(collector)
    with (
        pytest.raises(KeyError),
        recorder.get_tracer("app").start_span("POST /q", kind=SpanKind.SERVER) as span,
    ):
        assert span.is_recording()
        raise KeyError("missing")
    assert not span.is_recording()  # ended
    recorder.shutdown()
    (sent,) = collector.spans()
    assert (sent.status.code, sent.status.message) == (2, "KeyError: 'missing'")
    assert [e.name for e in sent.events] == ["exception"]


@pytest.mark.parametrize("how", ["start_span", "start_as_current_span"])
def test_a_span_started_not_to_record_exceptions_does_not(collector: Collector, how: str) -> None:
    recorder = recorder_for(collector)
    start = getattr(recorder.get_tracer("app"), how)
    with (
        pytest.raises(KeyError),
        start(
            "POST /q", kind=SpanKind.SERVER, record_exception=False, set_status_on_exception=False
        ),
    ):
        raise KeyError("missing")
    recorder.shutdown()
    (sent,) = collector.spans()
    assert (sent.status.code, list(sent.events)) == (0, [])


def test_a_span_keeps_what_the_api_allows_until_it_ends(collector: Collector) -> None:
    recorder = recorder_for(collector)
    tracer = recorder.get_tracer("app")
    span = tracer.start_span("POST /q", kind=SpanKind.SERVER, attributes={"none": None})
    span.set_attribute("map", {"a": 1})  # type: ignore[arg-type]
    span.set_attribute("mixed", ["a", object()])  # type: ignore[list-item]
    span.set_attributes({f"a{i}": i for i in range(MAX_ATTRIBUTES + 10)})
    span.set_status(StatusCode.OK, "ignored: only an error has a description")
    span.set_status(StatusCode.ERROR, "too late: OK is final")
    span.update_name("POST /renamed")
    span.end()
    span.set_attribute("after", 1)
    span.update_name("after the end")
    span.end()  # a second end sends nothing more
    recorder.shutdown()
    (sent,) = collector.spans()
    kept = attributes_of(sent)
    assert len(kept) == MAX_ATTRIBUTES and kept["a0"] == 0 and "after" not in kept
    assert not {"none", "map", "mixed"} & set(kept)
    assert (sent.name, sent.status.code, sent.status.message) == ("POST /renamed", 1, "")


def _ended_spans(recorder: Recorder, count: int) -> None:
    tracer = recorder.get_tracer("app")
    for i in range(count):
        tracer.start_span(f"POST /{i}", kind=SpanKind.SERVER).end()


def test_a_full_queue_drops_new_spans_and_says_so_once(
    collector: Collector, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "5")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")  # only flushes send
    recorder = recorder_for(collector)
    assert (recorder.max_queue, recorder.batch) == (5, 5)  # a batch fits in the queue
    recorder.batch = 100  # so that a full batch does not wake the sending thread meanwhile
    with caplog.at_level(logging.WARNING, "app.observability.recorder"):
        _ended_spans(recorder, 8)
    assert recorder.dropped == 3
    assert [r.getMessage() for r in caplog.records] == [
        "Spans are being dropped: 5 wait to be sent"
    ]
    assert recorder.force_flush()
    assert [s.name for s in collector.spans()] == [f"POST /{i}" for i in range(5)]
    recorder.shutdown()


def test_spans_go_in_batches_and_a_failed_send_does_not_stop_the_next(
    collector: Collector, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
    recorder = recorder_for(collector)
    collector.failing = True
    with caplog.at_level(logging.INFO, "app.observability.recorder"):
        for _ in range(2):
            _ended_spans(recorder, 1)
            assert not recorder.force_flush()  # lost with the collector down
        collector.failing = False
        _ended_spans(recorder, 5)
        assert recorder.force_flush()
    # In batches of at most 2 (a full batch wakes the sending thread, which may send one
    # before the flush does), none lost once the collector is back.
    sizes = [len(spans_of(body)) for body in collector.bodies]
    assert sum(sizes) == 5 and max(sizes) == 2 and min(sizes) >= 1
    said = [r.getMessage().splitlines()[0] for r in caplog.records]
    assert said == [  # once, not every batch
        "Spans could not be sent to the OTLP endpoint (1 lost); those ended until it answers"
        " again are lost too",
        "Spans reach the OTLP endpoint again (2 batches lost)",
    ]
    assert "ConnectionError: collector down" in caplog.text  # why, with the first
    recorder.shutdown()


def test_a_full_batch_is_sent_at_once_without_a_small_remainder(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")  # no send at an interval
    recorder = recorder_for(collector)
    with recorder._exporting:  # the five wait together, the thread woken meanwhile
        _ended_spans(recorder, 5)
    wait_until_sent(collector, 4)
    time.sleep(0.5)  # the fifth would follow at once, were it sent with them
    assert [len(spans_of(body)) for body in collector.bodies] == [2, 2]
    assert recorder.force_flush()  # the rest goes at the interval, or with a flush
    assert len(collector.spans()) == 5
    recorder.shutdown()


def test_the_sending_thread_sends_without_being_asked(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    recorder = recorder_for(collector)
    _ended_spans(recorder, 3)
    wait_until_sent(collector, 3)
    assert len(collector.spans()) == 3
    recorder.shutdown()


def wait_until_sent(collector: Collector, count: int) -> None:
    """Until the sending thread has sent `count` spans, however busy the machine (a
    minute at most)."""
    for _ in range(600):
        if len(collector.spans()) >= count:
            return
        time.sleep(0.1)

"""OpenTelemetry traces, sent over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.

Off (the default) nothing is set up: no tracer provider, no instrumented library, and each
`span()` below returns one shared empty context manager. On, one trace per question: the
request's span (FastAPI's own telemetry), the run, its queueing, preparation, steps (the
model call with the GenAI semantic conventions' attributes, the code in the sandbox, the
artifacts), the answer's check and the end; SQLAlchemy's and httpx's instrumentations add
the database statements and the model server's HTTP requests under them.

What is exported is scrubbed in one place (`ScrubbingExporter`): known secrets and
anything shaped like a key or a bearer token are replaced, a request's path and query are
left out (the route template stays: a shared report's token is in its path), an outgoing
URL loses its query. Prompts and replies are put on spans only with OTEL_CAPTURE_CONTENT.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_ON,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
    TraceIdRatioBased,
)
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import Attributes
from sqlalchemy import event
from sqlalchemy.orm import Session

from app.agent.calls import MIN_SECRET_CHARS, SECRET_SHAPES, redact
from app.config import Settings

log = logging.getLogger(__name__)

_NOTHING: AbstractContextManager[None] = nullcontext()
_PROPAGATOR = TraceContextTextMapPropagator()
# Longest text an attribute keeps (captured prompts are cut there).
MAX_TEXT_CHARS = 32_000

_tracer: trace.Tracer | None = None
_capture_content = False


def enabled() -> bool:
    """Whether spans are being recorded (the app was started with an OTLP endpoint)."""
    return _tracer is not None


def capture_content() -> bool:
    """Whether prompts and replies go on model-call spans (OTEL_CAPTURE_CONTENT)."""
    return _tracer is not None and _capture_content


def wanted(settings: Settings) -> bool:
    """Whether the settings and the standard OTEL_* variables ask for traces."""
    if settings.traces_endpoint is None:
        return False
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() != "none"


def create_provider(settings: Settings, exporter: SpanExporter | None = None) -> TracerProvider:
    """A tracer provider that sends the app's spans, scrubbed, to the OTLP endpoint.

    Args:
        settings: The app's settings (the endpoint, and the secrets to scrub).
        exporter: Where spans go instead of the OTLP endpoint (tests, benchmarks).
    """
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=settings.traces_endpoint)
    name = os.environ.get("OTEL_SERVICE_NAME") or "workbench"
    provider = TracerProvider(
        resource=_Resource(Resource.create({SERVICE_NAME: name})),
        sampler=RequestRooted(sampled_share()),
    )
    scrubbing = ScrubbingExporter(exporter, secrets_of(settings))
    provider.add_span_processor(BatchSpanProcessor(scrubbing))
    return provider


def sampled_share() -> float:
    """The share of questions traced: 1, or OTEL_TRACES_SAMPLER_ARG with a ratio sampler
    (`traceidratio`, `parentbased_traceidratio`) in OTEL_TRACES_SAMPLER."""
    sampler = os.environ.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    if sampler not in ("traceidratio", "parentbased_traceidratio"):
        return 1.0
    try:
        return min(1.0, max(0.0, float(os.environ.get("OTEL_TRACES_SAMPLER_ARG", "1"))))
    except ValueError:
        return 1.0


def secrets_of(settings: Settings) -> list[str]:
    """The values of the settings marked secret (keys, passwords, tokens), to scrub."""
    found: list[str] = []
    for name, field in type(settings).model_fields.items():
        extra = field.json_schema_extra
        value = getattr(settings, name)
        if isinstance(extra, dict) and extra.get("secret") and isinstance(value, str) and value:
            found.extend(v.strip() for v in value.split(",") if v.strip())
    return found


# The app's engines and SQLAlchemy's instrumentation of each (see _trace_statements).
_statement_tracers: dict[Any, Any] = {}


def activate(provider: TracerProvider, settings: Settings, engines: Sequence[Any]) -> None:
    """Record spans with this provider from now on (until `deactivate`), the statements of
    these SQLAlchemy engines and the requests of httpx (the model servers') included."""
    global _tracer, _capture_content
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.sqlalchemy.engine import _handle_error
    from opentelemetry.metrics import NoOpUpDownCounter

    _tracer = provider.get_tracer("app")
    _capture_content = settings.OTEL_CAPTURE_CONTENT
    statements = provider.get_tracer("opentelemetry.instrumentation.sqlalchemy")
    statement_tracer = _statement_tracer()
    _statement_tracers.clear()
    for engine in engines:
        _statement_tracers[engine.sync_engine] = statement_tracer(
            statements, engine.sync_engine, NoOpUpDownCounter("db.client.connections")
        )
        # A failed statement's span is ended with its error (a hook of the dialect's,
        # called only when a statement fails).
        if not event.contains(engine.sync_engine, "handle_error", _handle_error):
            event.listen(engine.sync_engine, "handle_error", _handle_error)
    event.listen(Session, "after_begin", _trace_statements)
    HTTPXClientInstrumentor().instrument(tracer_provider=provider)


def _statement_tracer() -> type[Any]:
    """SQLAlchemy's instrumentation (a span for each statement, with the statement), kept
    to what a recorded question needs: it listens to no engine and no pool (their
    listeners would cost every statement and every connection an event dispatch, recorded
    or not: 1% of a run); `_trace_statements` gives it the connections of recorded
    questions."""
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer

    class StatementTracer(EngineTracer):  # type: ignore[misc]
        @classmethod
        def _register_event_listener(
            cls, target: Any, identifier: str, *args: Any, **kw: Any
        ) -> None:
            pass

    return StatementTracer


def _trace_statements(_session: Any, _transaction: Any, connection: Any) -> None:
    """When a session begins on one of the app's engines inside a recorded question, the
    statements of that connection (one transaction's) get SQLAlchemy's spans."""
    from opentelemetry.instrumentation.sqlalchemy.engine import _after_cur_exec

    tracer = _statement_tracers.get(connection.engine)
    if tracer is None or not _in_recorded_trace():
        return
    if event.contains(connection, "after_cursor_execute", _after_cur_exec):
        return
    event.listen(connection, "before_cursor_execute", tracer._before_cur_exec, retval=True)
    event.listen(connection, "after_cursor_execute", _after_cur_exec)


def deactivate(provider: TracerProvider) -> None:
    """Stop recording; the spans recorded so far are sent first."""
    global _tracer
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.sqlalchemy.engine import _handle_error

    _tracer = None
    if event.contains(Session, "after_begin", _trace_statements):
        event.remove(Session, "after_begin", _trace_statements)
    for engine in _statement_tracers:
        if event.contains(engine, "handle_error", _handle_error):
            event.remove(engine, "handle_error", _handle_error)
    _statement_tracers.clear()
    HTTPXClientInstrumentor().uninstrument()
    provider.shutdown()


def span(
    name: str,
    attributes: Attributes = None,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    links: Sequence[Link] | None = None,
) -> AbstractContextManager[Span | None]:
    """A span around a block, the current one inside it (nothing when traces are off, or
    outside a recorded question's: a sampled-out question costs no span of ours)."""
    if _tracer is None or not _in_recorded_trace():
        return _NOTHING
    return _tracer.start_as_current_span(name, attributes=attributes, kind=kind, links=links)


def start(name: str, attributes: Attributes = None, *, kind: SpanKind = SpanKind.INTERNAL) -> Span:
    """A span that the caller ends (`finish`); a no-op span when traces are off or the
    question is not recorded."""
    if _tracer is None or not _in_recorded_trace():
        return trace.INVALID_SPAN
    return _tracer.start_span(name, attributes=attributes, kind=kind)


def unrecorded_quiet() -> AbstractContextManager[Any]:
    """Inside a question whose trace is not recorded (sampled out), the instrumented
    libraries' hooks (httpx's) return at their first check, instead of working out a span's
    attributes and headers for a span that is dropped."""
    if _tracer is None or _in_recorded_trace():
        return _NOTHING
    return suppress_instrumentation()


def _in_recorded_trace() -> bool:
    """Whether the current span belongs to a recorded (sampled) trace. It may have ended
    already: the artifacts of a step are stored after the step's span."""
    return trace.get_current_span().get_span_context().trace_flags.sampled


def current(span_: Span) -> AbstractContextManager[Any]:
    """Make a span from `start` the current one inside a block (it is not ended there)."""
    if _tracer is None:
        return _NOTHING
    return trace.use_span(span_, end_on_exit=False)


def finish(span_: Span, error: BaseException | None = None) -> None:
    """End a span from `start`, marked failed by `error` if there is one."""
    if error is not None and span_.is_recording():
        span_.set_attribute("error.type", type(error).__qualname__)
        span_.set_status(Status(StatusCode.ERROR, type(error).__qualname__))
    span_.end()


def context() -> Context | None:
    """The current context, to carry to other code: None when traces are off or the
    question is not recorded (nothing is recorded under it: carrying it, an attach and a
    detach for each of a run's events, cost a sampled-out run about 1%)."""
    if _tracer is None or not _in_recorded_trace():
        return None
    return otel_context.get_current()


def attached(carried: Context | None) -> AbstractContextManager[None]:
    """Make a carried context current inside a block (nothing for None: traces off)."""
    return _NOTHING if carried is None else _Attached(carried)


class _Attached:
    def __init__(self, carried: Context):
        self.carried = carried
        self.token: object = None

    def __enter__(self) -> None:
        self.token = otel_context.attach(self.carried)

    def __exit__(self, *_: object) -> None:
        otel_context.detach(self.token)  # type: ignore[arg-type]


def remember(into: dict[str, Any]) -> None:
    """Put the current span's W3C traceparent into `into` (a run that will go on later)."""
    if _tracer is not None:
        _PROPAGATOR.inject(into)


def links_to(carrier: Mapping[str, Any] | None) -> list[Link]:
    """A link to the span whose traceparent `carrier` holds (see `remember`), if any."""
    if _tracer is None or not carrier or not isinstance(carrier.get("traceparent"), str):
        return []
    earlier = trace.get_current_span(_PROPAGATOR.extract({"traceparent": carrier["traceparent"]}))
    linked = earlier.get_span_context()
    return [Link(linked, {"workbench.link": "earlier part of the run"})] if linked.is_valid else []


def text(value: str) -> str:
    """Text as an attribute keeps it (cut to MAX_TEXT_CHARS)."""
    return value if len(value) <= MAX_TEXT_CHARS else value[:MAX_TEXT_CHARS] + "…"


class _Resource(Resource):
    """A resource whose hash is worked out once: the OTLP encoder hashes a span's resource
    for every span it sends (the SDK's hash serialises every attribute to JSON each time)."""

    def __init__(self, resource: Resource):
        super().__init__(resource.attributes, resource.schema_url)
        self._hash = super().__hash__()

    def __hash__(self) -> int:
        return self._hash


class RequestRooted(Sampler):
    """Every trace starts at a request: what is done outside any (a sweeper's poll, the
    model's warm-up, a spare sandbox started at start-up) is not recorded."""

    def __init__(self, ratio: float = 1.0) -> None:
        # A share of the questions is traced (OTEL_TRACES_SAMPLER=parentbased_traceidratio
        # with OTEL_TRACES_SAMPLER_ARG), whatever a caller's own trace decided.
        root = ALWAYS_ON if ratio >= 1.0 else TraceIdRatioBased(ratio)
        self._inner = ParentBased(root, remote_parent_not_sampled=root)

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: Any = None,
    ) -> SamplingResult:
        parent = trace.get_current_span(parent_context).get_span_context()
        if kind != SpanKind.SERVER and not parent.is_valid:
            return SamplingResult(Decision.DROP)
        return self._inner.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )

    def get_description(self) -> str:
        return "RequestRooted"


# Attributes that may carry what a client typed or a token: a request's path (a shared
# report's token is in it) and query. The route template (http.route) says which endpoint.
_DROPPED = frozenset({"url.path", "url.query", "http.target"})
_URLS = frozenset({"url.full", "http.url"})


class ScrubbingExporter(SpanExporter):
    """Passes spans on with secrets removed from every attribute and event (see module).

    Most spans hold nothing to remove, and are passed on as they are after a quick look at
    their strings (`_holds`): the spans of every question go through here.
    """

    def __init__(self, inner: SpanExporter, secrets: Sequence[str | None]):
        self.inner = inner
        self.secrets: list[str | None] = [s for s in secrets if s]
        whole = [re.escape(s) for s in self.secrets if s and len(s) >= MIN_SECRET_CHARS]
        # One search for every secret at once (most strings hold none of them).
        self.whole = re.compile("|".join(whole)) if whole else None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self._scrubbed(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def _scrubbed(self, span_: ReadableSpan) -> ReadableSpan:
        name = self._text(span_.name)
        attributes = self._attributes(span_.attributes)
        if name is span_.name and attributes is None and not span_.events:
            return span_  # nothing to remove (most spans): passed on as it is
        return ReadableSpan(
            name=name,
            context=span_.context,
            parent=span_.parent,
            resource=span_.resource,
            attributes=dict(span_.attributes or {}) if attributes is None else attributes,
            events=[
                Event(e.name, self._attributes(e.attributes) or e.attributes, e.timestamp)
                for e in span_.events
            ],
            links=span_.links,
            kind=span_.kind,
            status=span_.status,
            start_time=span_.start_time,
            end_time=span_.end_time,
            instrumentation_scope=span_.instrumentation_scope,
        )

    def _attributes(self, attributes: Attributes) -> dict[str, Any] | None:
        """The attributes as exported, or None when nothing in them is removed."""
        clean: dict[str, Any] = {}
        changed = False
        for name, value in (attributes or {}).items():
            if name in _DROPPED:
                changed = True
                continue
            if name in _URLS and isinstance(value, str):
                kept: Any = _without_query(value)
            elif isinstance(value, str):
                kept = self._text(value)
            elif isinstance(value, tuple | list):
                cleaned = [self._text(v) if isinstance(v, str) else v for v in value]
                same = all(a is b for a, b in zip(cleaned, value, strict=True))
                kept = value if same else cleaned
            else:
                kept = value
            changed = changed or kept is not value
            clean[name] = kept
        return clean if changed else None

    def _text(self, text: str) -> str:
        """The text without secrets: the same object when it holds none (most strings)."""
        return redact(text, self.secrets) if self._holds(text) else text

    def _holds(self, text: str) -> bool:
        """Whether `redact` would change `text`: a secret in it, or a key's or a bearer
        token's shape (which needs a "-" or the word "bearer": most strings have neither)."""
        if self.whole is not None and self.whole.search(text) is not None:
            return True
        if "-" not in text and "bearer" not in text.lower():
            return False
        return SECRET_SHAPES.search(text) is not None


def _without_query(url: str) -> str:
    """A URL without its query, fragment or user info (they may carry keys)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "[url]"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))

"""OpenTelemetry traces, sent over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.

Off (the default) nothing is set up: no tracer provider, no instrumented library, and each
`span()` below returns one shared empty context manager. On, one trace per question: the
request's span (FastAPI's own telemetry), the run, its queueing, preparation, steps (the
model call with the GenAI semantic conventions' attributes, the code in the sandbox, the
artifacts), the answer's check and the end; SQLAlchemy's and httpx's instrumentations add
the database statements and the model server's HTTP requests under them.

What is exported is scrubbed in one place (`scrubber`, as spans are encoded): known secrets and
anything shaped like a key or a bearer token are replaced, a request's path and query are
left out (the route template stays: a shared report's token is in its path), an outgoing
URL loses its query. Prompts and replies are put on spans only with OTEL_CAPTURE_CONTENT.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import Attributes

from app.agent.calls import MIN_SECRET_CHARS, SECRET_SHAPES, redact
from app.config import Settings
from app.observability.current import attach, current_context, detach
from app.observability.otlp import Scrubber
from app.observability.recorder import Recorder, RequestRooted, in_recorded_trace

if TYPE_CHECKING:
    from app.observability.statements import StatementTracer

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


def create_provider(settings: Settings, send: Callable[[bytes], bool] | None = None) -> Recorder:
    """A tracer provider that sends the app's spans, scrubbed, to the OTLP endpoint.

    Args:
        settings: The app's settings (the endpoint, and the secrets to scrub).
        send: Where encoded spans go instead of the OTLP endpoint (tests, benchmarks).
    """
    if send is None:
        send = OtlpSender(settings.traces_endpoint)
    name = os.environ.get("OTEL_SERVICE_NAME") or "workbench"
    resource = Resource.create({SERVICE_NAME: name})  # with OTEL_RESOURCE_ATTRIBUTES
    return Recorder(
        send,
        dict(resource.attributes),
        scrubber(settings.secret_values()),
        RequestRooted(sampled_share()),
    )


class SpansNotSent(Exception):
    """The OTLP endpoint did not take a batch of spans (the reason is the message)."""

    def __init__(self, reason: object) -> None:
        super().__init__(
            f"{type(reason).__name__}: {reason}" if isinstance(reason, Exception) else reason
        )


class OtlpSender:
    """Sends encoded spans with OpenTelemetry's OTLP/HTTP exporter's transport: its
    endpoint, headers, compression, TLS, timeout and retries, from the OTEL_* variables.
    (Its HTTP client is the exporter's private part: the exporter itself takes only the
    SDK's spans. The version is pinned by uv.lock; tests/api/test_traces.py sends through
    it to a real receiver.)"""

    def __init__(self, endpoint: str | None) -> None:
        from opentelemetry.exporter.otlp.proto.http import trace_exporter

        self.exporter = trace_exporter.OTLPSpanExporter(endpoint=endpoint)
        # The recorder says once when spans stop reaching the endpoint, and why; the
        # exporter's client would say it twice a batch, every few seconds, until it answers.
        logging.getLogger(trace_exporter.__name__).setLevel(logging.CRITICAL)

    def __call__(self, body: bytes) -> bool:
        result = self.exporter._client.export(body)
        if not result.success:
            raise SpansNotSent(result.error or f"HTTP {result.status_code}")
        return True

    def close(self) -> None:
        self.exporter.shutdown()


def scrubber(secrets: Sequence[str | None]) -> Scrubber:
    """What every exported string goes through (see module)."""
    return Scrubber(SecretText(secrets).text, _DROPPED, _URLS, _without_query)


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


# The statement tracers listening on the app's engines (app/observability/statements.py).
_statement_tracers: list[StatementTracer] = []


def activate(provider: Recorder, settings: Settings, engines: Sequence[Any]) -> None:
    """Record spans with this provider from now on (until `deactivate`), the statements of
    these SQLAlchemy engines and the requests of httpx (the model servers') included."""
    global _tracer, _capture_content
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    from app.observability.statements import StatementTracer

    _tracer = provider.get_tracer("app")
    _capture_content = settings.OTEL_CAPTURE_CONTENT
    statements = provider.get_tracer("opentelemetry.instrumentation.sqlalchemy")
    _statement_tracers.extend(StatementTracer(statements, e.sync_engine).listen() for e in engines)
    HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    _skip_unread_headers()


def _skip_unread_headers() -> None:
    """httpx's instrumentation turns every request's and reply's headers into a dict of
    lists, for the headers that OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST and
    _RESPONSE name, and keeps none when they name none (the default): about 1,500 calls a
    model call, a seventh of what tracing a question cost. With none named, that step
    (the instrumentation's `_normalize_headers`, looked up at each request) finds no
    headers; its spans are the same. `_read_headers_again` puts it back."""
    from opentelemetry.instrumentation import httpx as instrumentation
    from opentelemetry.util.http import (
        OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST,
        OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_RESPONSE,
        get_custom_headers,
    )

    global _normalize_headers
    if get_custom_headers(OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_REQUEST) or (
        get_custom_headers(OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_CLIENT_RESPONSE)
    ):
        return
    if _normalize_headers is None:
        _normalize_headers = instrumentation._normalize_headers
    instrumentation._normalize_headers = _no_headers


def _read_headers_again() -> None:
    """Undo `_skip_unread_headers`."""
    from opentelemetry.instrumentation import httpx as instrumentation

    global _normalize_headers
    if _normalize_headers is not None:
        instrumentation._normalize_headers = _normalize_headers
        _normalize_headers = None


# httpx's instrumentation's own `_normalize_headers`, while it is replaced (see above).
_normalize_headers: Callable[..., Any] | None = None


def _no_headers(headers: object, module: object) -> dict[str, list[str]]:
    return {}


def deactivate(provider: Recorder) -> None:
    """Stop recording; the spans recorded so far are sent first."""
    global _tracer
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    _tracer = None
    for tracer in _statement_tracers:
        tracer.stop()
    _statement_tracers.clear()
    _read_headers_again()
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
    if _tracer is None or not in_recorded_trace():
        return _NOTHING
    return _tracer.start_as_current_span(name, attributes=attributes, kind=kind, links=links)


def start(name: str, attributes: Attributes = None, *, kind: SpanKind = SpanKind.INTERNAL) -> Span:
    """A span that the caller ends (`finish`); a no-op span when traces are off or the
    question is not recorded."""
    if _tracer is None or not in_recorded_trace():
        return trace.INVALID_SPAN
    return _tracer.start_span(name, attributes=attributes, kind=kind)


def unrecorded_quiet() -> AbstractContextManager[Any]:
    """Inside a question whose trace is not recorded (sampled out), the instrumented
    libraries' hooks (httpx's) return at their first check, instead of working out a span's
    attributes and headers for a span that is dropped."""
    if _tracer is None or in_recorded_trace():
        return _NOTHING
    return suppress_instrumentation()


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
    if _tracer is None or not in_recorded_trace():
        return None
    return current_context()


def attached(carried: Context | None) -> AbstractContextManager[None]:
    """Make a carried context current inside a block (nothing for None: traces off)."""
    return _NOTHING if carried is None else _Attached(carried)


class _Attached:
    def __init__(self, carried: Context):
        self.carried = carried
        self.token: object = None

    def __enter__(self) -> None:
        self.token = attach(self.carried)

    def __exit__(self, *_: object) -> None:
        detach(self.token)


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


# Attributes that may carry what a client typed or a token: a request's path (a shared
# report's token is in it) and query. The route template (http.route) says which endpoint.
_DROPPED = frozenset({"url.path", "url.query", "http.target"})
_URLS = frozenset({"url.full", "http.url"})


class SecretText:
    """Removes secrets from a string: the settings' (`secrets`), and anything shaped like
    a key or a bearer token. Most strings hold none, and are returned as they are after a
    quick look (`_holds`): every exported string goes through here."""

    def __init__(self, secrets: Sequence[str | None]):
        self.secrets: list[str | None] = [s for s in secrets if s]
        whole = [re.escape(s) for s in self.secrets if s and len(s) >= MIN_SECRET_CHARS]
        # One search for every secret at once (most strings hold none of them).
        self.whole = re.compile("|".join(whole)) if whole else None

    def text(self, text: str) -> str:
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

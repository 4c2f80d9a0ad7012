"""A span recorder behind OpenTelemetry's tracing API, at a fraction of the SDK's cost.

The instrumentation libraries (FastAPI's telemetry, httpx's, SQLAlchemy's) and the app's
own spans speak OpenTelemetry's API; this is what records them when traces are on, in
place of the SDK's `TracerProvider`. Measured against the SDK (a question is about 45
spans), the SDK spent about 580 Python calls a span: attribute validation under a lock,
a `ReadableSpan` copy, a batch processor's locks, and an OTLP encoder that builds a
protobuf object per attribute. Tracing every question cost a run 17-21% more CPU.

Here a span is a small object that collects what it is given (as the API says it may be:
a string, a bool, an int, a float, or a sequence of them), and an ended span is put in a
bounded queue. A thread sends the queue every OTEL_BSP_SCHEDULE_DELAY ms (or as soon as
OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans wait), written straight into the OTLP protobuf wire
format (otlp.py's `Encoder`), secrets scrubbed on the way (`Scrubber`), over the OTLP/HTTP
exporter's own transport (its headers, compression, TLS, timeout and retries from the
OTEL_* variables). A full queue (OTEL_BSP_MAX_QUEUE_SIZE) drops the newest spans and says
so once in the log, as the SDK's batch processor does.

Which spans are recorded (`RequestRooted`): every trace starts at a request (a server
span); a share of them (OTEL_TRACES_SAMPLER_ARG) by trace id; a child follows its parent.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.trace.propagation import _SPAN_KEY
from opentelemetry.util.types import Attributes

from app.observability.current import CONTEXT, attach, current_context, current_span, detach
from app.observability.otlp import Encoder, Scrubber

log = logging.getLogger(__name__)

# A span keeps at most this many attributes, events and links (the SDK's defaults).
MAX_ATTRIBUTES = 128
MAX_EVENTS = 128
MAX_LINKS = 128
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NOT_SAMPLED = TraceFlags(TraceFlags.DEFAULT)
_VALUE_TYPES = (str, bool, int, float)
_SIMPLE = frozenset(_VALUE_TYPES)
_ID_BOUND = 2**64


def in_recorded_trace() -> bool:
    """Whether the current span is in a recorded (sampled) trace. It may have ended."""
    span: Any
    if CONTEXT is None:
        span = trace.get_current_span()
    else:  # (current_span, inline: statements and the app's spans ask this 80 times a run)
        span = CONTEXT.get().get(_SPAN_KEY)
        if span is None:
            return False
    return type(span) is _Span or bool(span.get_span_context().trace_flags & TraceFlags.SAMPLED)


def _env_int(name: str, default: int) -> int:
    try:
        return max(1, int(os.environ.get(name, default)))
    except ValueError:
        return default


class RequestRooted:
    """Which spans are recorded: a trace starts only at a request (a span of kind SERVER:
    a sweeper's poll, the model's warm-up or a spare sandbox started at start-up record
    nothing); `ratio` of the requests' traces are recorded, chosen by trace id as
    OpenTelemetry's `TraceIdRatioBased` does; a span under a recorded one is recorded, and
    one under a caller's (remote) recorded span too."""

    def __init__(self, ratio: float = 1.0) -> None:
        self._bound = round(min(1.0, max(0.0, ratio)) * _ID_BOUND)

    def root(self, trace_id: int) -> bool:
        """Whether a request's trace with this id is recorded."""
        return (trace_id & (_ID_BOUND - 1)) < self._bound

    def recorded(self, parent: SpanContext, kind: SpanKind) -> bool | None:
        """Whether a span under `parent` is recorded; None: a new trace's root, if any
        (`root` decides, by its new trace id)."""
        if not parent.is_valid:
            return None if kind is SpanKind.SERVER else False
        if parent.trace_flags & TraceFlags.SAMPLED:
            return True
        if parent.is_remote:  # a caller that did not record: our own share decides
            return self.root(parent.trace_id)
        return False


class Recorder(trace.TracerProvider):
    """Records spans (see module) and hands them, encoded, to `send` in batches.

    Args:
        send: Sends one encoded OTLP ExportTraceServiceRequest; False when it failed. Its
            `close()`, if it has one, is called at shutdown.
        resource: The resource's attributes (service.name and the like).
        scrubber: What removes secrets from every exported string.
        sampler: Which spans are recorded.
    """

    def __init__(
        self,
        send: Callable[[bytes], bool],
        resource: Mapping[str, Any],
        scrubber: Scrubber,
        sampler: RequestRooted | None = None,
    ) -> None:
        self.sampler = sampler or RequestRooted()
        self.encoder = Encoder(resource, scrubber)
        self._send = send
        self._tracers: dict[tuple[str, str | None], _Tracer] = {}
        self._ended: deque[_Span] = deque()
        self.max_queue = _env_int("OTEL_BSP_MAX_QUEUE_SIZE", 2048)
        self.batch = min(self.max_queue, _env_int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512))
        self.delay = _env_int("OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000
        self.dropped = 0
        self.failed_batches = 0  # failed sends in a row
        self._wake = threading.Event()
        self._exporting = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="span-export", daemon=True)
        self._thread.start()

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes = None,
    ) -> trace.Tracer:
        key = (instrumenting_module_name, instrumenting_library_version)
        tracer = self._tracers.get(key)
        if tracer is None:
            scope = self.encoder.scope(instrumenting_module_name, instrumenting_library_version)
            tracer = self._tracers[key] = _Tracer(self, scope)
        return tracer

    def ended(self, span: _Span) -> None:
        """Queue an ended span for sending (dropped when the queue is full)."""
        if len(self._ended) >= self.max_queue:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("Spans are being dropped: %d wait to be sent", self.max_queue)
            return
        self._ended.append(span)
        if len(self._ended) >= self.batch:
            self._wake.set()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Send every span still waiting; whether every batch of them was taken (spans the
        sending thread could not send before are lost already, and not counted here)."""
        return self._export(timeout_millis / 1000)

    def shutdown(self) -> None:
        """Send what is left, stop the sending thread."""
        if self._stopped:
            return
        self._stopped = True
        self._wake.set()
        self._thread.join(timeout=30)
        self._export(30.0)
        close = getattr(self._send, "close", None)
        if close is not None:
            close()

    def _run(self) -> None:
        while not self._stopped:
            # Woken by a full batch: whole batches only (a busy backend sends no small
            # remainders); at the interval, everything waiting.
            full = self._wake.wait(self.delay)
            self._wake.clear()
            if not self._stopped:
                self._export(self.delay, whole_batches=full)

    def _export(self, timeout: float, whole_batches: bool = False) -> bool:
        if not self._exporting.acquire(timeout=timeout):
            return False
        try:
            ok = True
            while self._ended and (not whole_batches or len(self._ended) >= self.batch):
                batch: list[_Span] = []
                while self._ended and len(batch) < self.batch:
                    batch.append(self._ended.popleft())
                error: Exception | None = None
                try:
                    sent = self._send(self.encoder.request(batch))
                except Exception as exc:  # an exporter's failure must not stop the thread
                    sent, error = False, exc
                self._said(sent, len(batch), error)
                ok = ok and sent
            return ok
        finally:
            self._exporting.release()

    def _said(self, sent: bool, count: int, error: Exception | None) -> None:
        """Say in the log when spans stop reaching the collector (once, not every batch)
        and when they reach it again."""
        if not sent:
            self.failed_batches += 1
            if self.failed_batches == 1:
                log.warning(
                    "Spans could not be sent to the OTLP endpoint (%d lost); those ended "
                    "until it answers again are lost too",
                    count,
                    exc_info=error,
                )
        elif self.failed_batches:
            log.info("Spans reach the OTLP endpoint again (%d batches lost)", self.failed_batches)
            self.failed_batches = 0


class _Tracer(trace.Tracer):
    def __init__(self, recorder: Recorder, scope: bytes) -> None:
        self.recorder = recorder
        self.scope = scope

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace.Span:
        current = current_span() if context is None else trace.get_current_span(context)
        if type(current) is _Span:  # under a recorded span of this process: recorded
            trace_id, parent_id, remote = current.trace_id, current.span_id, False
        else:
            parent = current.get_span_context()
            recorded = self.recorder.sampler.recorded(parent, kind)
            if recorded is None:  # a request: a new trace, recorded or not
                trace_id = _new_id(128)
                if not self.recorder.sampler.root(trace_id):
                    unrecorded = SpanContext(trace_id, _new_id(64), False, _NOT_SAMPLED)
                    return NonRecordingSpan(unrecorded)
                parent_id, remote = 0, False
            elif not recorded:  # under a span not recorded: nothing, with the same context
                return NonRecordingSpan(parent) if parent.is_valid else trace.INVALID_SPAN
            else:  # under a caller's (remote) recorded span
                trace_id, parent_id, remote = parent.trace_id, parent.span_id, parent.is_remote
        span = _Span(
            self, name, trace_id, parent_id, remote, kind, attributes, links,
            start_time or time.time_ns(),
        )  # fmt: skip
        if not (record_exception and set_status_on_exception):
            span.on_error = (record_exception, set_status_on_exception)
        return span

    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> _Current:
        span = self.start_span(
            name, context, kind, attributes, links, start_time,
            record_exception, set_status_on_exception,
        )  # fmt: skip
        return _Current(span, end_on_exit)


class _Current:
    """`start_as_current_span`: the span is the current one inside the block, ended after
    it, an exception out of the block recorded on it (what the SDK's does, without its
    generator-based context manager)."""

    __slots__ = ("end_on_exit", "span", "token")

    def __init__(self, span: trace.Span, end_on_exit: bool) -> None:
        self.span = span
        self.end_on_exit = end_on_exit
        self.token: object = None

    def __enter__(self) -> trace.Span:
        self.token = attach(Context({**current_context(), _SPAN_KEY: self.span}))
        return self.span

    def __exit__(self, kind: type | None, error: BaseException | None, _tb: object) -> None:
        try:
            if isinstance(error, Exception) and isinstance(self.span, _Span):
                self.span.failed(error, escaped=False)  # as the API's use_span records it
        finally:
            detach(self.token)
            if self.end_on_exit:
                self.span.end()


def _new_id(bits: int) -> int:
    """A random id of `bits` bits, never 0 (the invalid id)."""
    return _random_bits(bits) or _new_id(bits)


_random_bits = random.getrandbits


class _Span(trace.Span):
    """A recorded span: what it is given, kept as given, until it ends. Its ids are kept as
    numbers (its SpanContext is made when asked for: mostly it is not)."""

    # What an exception out of the span's block does: it is recorded, it sets the status
    # (start_span's record_exception and set_status_on_exception).
    on_error = (True, True)

    def __init__(
        self,
        tracer: _Tracer,
        name: str,
        trace_id: int,
        parent_id: int,
        parent_remote: bool,
        kind: SpanKind,
        attributes: Attributes,
        links: Sequence[Link] | None,
        start: int,
    ) -> None:
        self.tracer = tracer
        self.name = name
        self.trace_id = trace_id
        self.span_id = _new_id(64)
        self.parent_id = parent_id  # 0: none (a trace's root)
        self.parent_remote = parent_remote  # the parent is a caller's span
        self._context: SpanContext | None = None
        self.kind = kind
        self.attributes = _clean(attributes) if attributes else {}
        self.links: list[Link] = list(links)[:MAX_LINKS] if links else []
        self.events: list[tuple[str, dict[str, Any], int]] = []
        self.status_code = StatusCode.UNSET
        self.status_message: str | None = None
        self.start_time = start
        self.end_time: int | None = None

    def get_span_context(self) -> SpanContext:
        context = self._context
        if context is None:
            context = self._context = SpanContext(self.trace_id, self.span_id, False, _SAMPLED)
        return context

    def is_recording(self) -> bool:
        return self.end_time is None

    def set_attribute(self, key: str, value: Any) -> None:
        if self.end_time is None:
            _keep(self.attributes, key, value)

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if self.end_time is None:
            for key, value in attributes.items():
                _keep(self.attributes, key, value)

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        if self.end_time is not None or len(self.events) >= MAX_EVENTS:
            return
        self.events.append((name, _clean(attributes), timestamp or time.time_ns()))

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        if self.end_time is None and context.is_valid and len(self.links) < MAX_LINKS:
            self.links.append(Link(context, attributes))

    def update_name(self, name: str) -> None:
        if self.end_time is None:
            self.name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self.end_time is not None or self.status_code is StatusCode.OK:
            return  # an OK status is final (the API's rule)
        if isinstance(status, Status):
            code, description = status.status_code, status.description
        else:
            code = status
        self.status_code = code
        self.status_message = description if code is StatusCode.ERROR else None

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        said: dict[str, Any] = {
            "exception.type": type(exception).__qualname__,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        if attributes:
            said.update(attributes)
        self.add_event("exception", said, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self.end_time is not None:
            return
        self.end_time = end_time or time.time_ns()
        self.tracer.recorder.ended(self)

    def __exit__(self, kind: type | None, error: BaseException | None, _tb: object) -> None:
        """`with tracer.start_span(...) as span:` ends it, an exception recorded on it (as
        the SDK's span does)."""
        if isinstance(error, Exception):
            self.failed(error, escaped=True)
        self.end()

    def failed(self, error: Exception, escaped: bool) -> None:
        """An exception ended the span's block: recorded and an ERROR status, as
        `on_error` says (nothing once the span has ended)."""
        if self.end_time is not None:
            return
        record, set_status = self.on_error
        if record:
            self.record_exception(error, escaped=escaped)
        if set_status:
            self.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))

    def __repr__(self) -> str:
        return f"_Span({self.name!r}, {self.span_id:016x})"


def _keep(attributes: dict[str, Any], key: str, value: Any) -> None:
    """Put an attribute in, if it is one the API allows: a string, a bool, an int, a float,
    or a sequence of them (kept as a tuple). Anything else (None included) is left out, as
    the SDK does, and so is a new one past MAX_ATTRIBUTES."""
    if not isinstance(value, _VALUE_TYPES):
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, _VALUE_TYPES) for v in value
        ):
            return
        value = tuple(value)
    if not isinstance(key, str) or not key:
        return
    if len(attributes) >= MAX_ATTRIBUTES and key not in attributes:
        return
    attributes[key] = value


def _clean(attributes: Attributes) -> dict[str, Any]:
    """The attributes a span keeps of these (see `_keep`)."""
    if not attributes:
        return {}
    if len(attributes) <= MAX_ATTRIBUTES:
        for key, value in attributes.items():  # (a loop: all() and a generator cost more)
            if type(value) not in _SIMPLE or type(key) is not str or not key:
                break
        else:
            return dict(attributes)  # the usual case: every one a string or a number
    kept: dict[str, Any] = {}
    for key, value in attributes.items():
        _keep(kept, key, value)
    return kept

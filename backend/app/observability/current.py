"""OpenTelemetry's current context and span, read and set straight from the ContextVar that
holds them: the API's own functions take three or four calls each to reach it, and a
question asks for the current span about 300 times. Used by the span recorder (recorder.py)
and by what carries a question's context (tracing.py, statements.py).
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.trace.propagation import _SPAN_KEY

log = logging.getLogger(__name__)


def _context_var() -> ContextVar[Context] | None:
    """The ContextVar that holds OpenTelemetry's current context, when the runtime context
    is the API's default one (OTEL_PYTHON_CONTEXT unset): read and set directly on a span's
    way (the API's get_current_span, attach and detach take three or four calls each to
    reach it, and a question asks for the current span about 300 times)."""
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    var = getattr(runtime, "_current_context", None)
    if type(runtime) is ContextVarsRuntimeContext and isinstance(var, ContextVar):
        return var
    return None


CONTEXT = _context_var()


def current_context() -> Context:
    """OpenTelemetry's current context (`context.get_current()`)."""
    return otel_context.get_current() if CONTEXT is None else CONTEXT.get()


def current_span() -> trace.Span:
    """The current span (`trace.get_current_span()`)."""
    if CONTEXT is None:
        return trace.get_current_span()
    span = CONTEXT.get().get(_SPAN_KEY)
    return trace.INVALID_SPAN if span is None else span  # type: ignore[return-value]


def attach(context: Context) -> object:
    """Make `context` the current one (`context.attach`); the token undoes it."""
    return otel_context.attach(context) if CONTEXT is None else CONTEXT.set(context)


def detach(token: object) -> None:
    """Undo an `attach` (`context.detach`: a token of another context is logged, not
    raised)."""
    if CONTEXT is None:
        otel_context.detach(token)  # type: ignore[arg-type]
        return
    try:
        CONTEXT.reset(token)  # type: ignore[arg-type]
    except Exception:
        log.exception("Failed to detach context")

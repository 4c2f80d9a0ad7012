"""Model calls as metrics and spans: each LiteLLM completion, watched from the request to
its last piece (or to where the agent cut it short).

A span follows OpenTelemetry's GenAI semantic conventions: named `chat <model>`, with
`gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens` and
`output_tokens`, `gen_ai.response.finish_reasons`; prompts and replies only with
OTEL_CAPTURE_CONTENT. What the model's server sends back (its model name, finish reasons)
goes on the span cut to size, never into a metric's label.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from litellm import exceptions as llm_errors
from opentelemetry.trace import SpanKind

from app.agent.calls import redact
from app.observability import metrics, tracing

# How many finish reasons a span keeps, and how long each may be (the server says them).
MAX_REASONS = 4
MAX_SERVER_TEXT = 100


def outcome_of(error: BaseException | None) -> str:
    """The `outcome` label of a call that ended with `error` (None: it went well)."""
    if error is None:
        return "ok"
    if isinstance(error, llm_errors.Timeout):
        return "timeout"
    if isinstance(error, llm_errors.RateLimitError):
        return "rate_limited"
    return "error"


class ModelCall:
    """One model call: started by `ModelCallWatch.start`, ended once by `end`."""

    def __init__(
        self,
        model_id: str,
        price: Callable[[int, int], float | None],
        attributes: dict[str, Any],
        secrets: list[str | None],
    ):
        self.model_id = model_id
        self.price = price
        self.secrets = secrets
        self.started = time.perf_counter()
        self.first_piece: float | None = None
        self.tokens: tuple[int, int] | None = None
        self.reasons: list[str] = []
        self.response_model: str | None = None
        self.text: list[str] | None = [] if tracing.capture_content() else None
        self.ended = False
        self.span = tracing.start(f"chat {model_id}", attributes, kind=SpanKind.CLIENT)

    def current(self) -> Any:
        """The call's span as the current one (the HTTP request's span goes under it)."""
        return tracing.current(self.span)

    def piece(self, chunk: Any) -> None:
        """A chunk of the streamed reply (or the whole reply of a call that did not stream)."""
        usage = getattr(chunk, "usage", None)
        counted = (getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
        if any(counted):
            self.tokens = (int(counted[0] or 0), int(counted[1] or 0))
        if self.response_model is None and isinstance(getattr(chunk, "model", None), str):
            self.response_model = chunk.model[:MAX_SERVER_TEXT]
        for choice in getattr(chunk, "choices", None) or ():
            reason = getattr(choice, "finish_reason", None)
            if isinstance(reason, str) and len(self.reasons) < MAX_REASONS:
                self.reasons.append(reason[:MAX_SERVER_TEXT])
            message = getattr(choice, "delta", None) or getattr(choice, "message", None)
            content = getattr(message, "content", None)
            if content and self.first_piece is None:
                self.first_piece = time.perf_counter()
            if content and self.text is not None:
                self.text.append(str(content))

    def cut(self) -> None:
        """End a call whose reply the agent stopped reading (its code block had ended, as
        at a stop sequence; or a limit): it finished with "stop" unless the server said."""
        if not self.ended and not self.reasons:
            self.reasons.append("stop")
            if self.span.is_recording():
                self.span.set_attribute("workbench.reply.cut_short", True)
        self.end()

    def end(self, error: BaseException | None = None) -> None:
        """Record the call (once): its metrics, and its span's last attributes."""
        if self.ended:
            return
        self.ended = True
        seconds = time.perf_counter() - self.started
        model = self.model_id
        metrics.MODEL_CALLS.labels(model, outcome_of(error)).inc()
        metrics.MODEL_DURATION.labels(model).observe(seconds)
        if self.first_piece is not None:
            metrics.MODEL_FIRST_TOKEN.labels(model).observe(self.first_piece - self.started)
        if self.tokens is not None:
            tokens_in, tokens_out = self.tokens
            metrics.MODEL_TOKENS.labels(model, "input").inc(tokens_in)
            metrics.MODEL_TOKENS.labels(model, "output").inc(tokens_out)
            cost = self.price(tokens_in, tokens_out)
            if cost:
                metrics.MODEL_COST.labels(model).inc(cost)
        span = self.span
        if span.is_recording():
            if self.tokens is not None:
                span.set_attribute("gen_ai.usage.input_tokens", self.tokens[0])
                span.set_attribute("gen_ai.usage.output_tokens", self.tokens[1])
            if self.reasons:
                span.set_attribute("gen_ai.response.finish_reasons", self.reasons)
            if self.response_model:
                span.set_attribute("gen_ai.response.model", self.response_model)
            if self.first_piece is not None:
                span.set_attribute(
                    "workbench.time_to_first_token_ms",
                    round((self.first_piece - self.started) * 1000, 1),
                )
            if self.text is not None:
                reply = redact("".join(self.text), self.secrets)
                output = [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}]
                span.set_attribute("gen_ai.output.messages", tracing.text(json.dumps(output)))
        tracing.finish(span, error)


class WatchedStream:
    """A streamed reply as smolagents reads it, each chunk seen by its ModelCall first."""

    def __init__(self, stream: Any, call: ModelCall):
        self._stream = stream
        self._call = call

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            chunk = next(self._stream)
        except StopIteration:
            self._call.end()
            raise
        except BaseException as exc:
            self._call.end(exc)
            raise
        self._call.piece(chunk)
        return chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class ModelCallWatch:
    """Watches the model calls of one model (a run's): see `start`."""

    def __init__(
        self,
        model_id: str,
        api_base: str | None,
        price: Callable[[int, int], float | None],
        secrets: list[str | None],
    ):
        self.model_id = model_id
        self.price = price
        self.secrets = secrets
        provider = model_id.split("/", 1)[0] if "/" in model_id else "litellm"
        self.attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model_id,
        }
        if api_base:
            parts = urlsplit(api_base if "//" in api_base else f"http://{api_base}")
            if parts.hostname:
                self.attributes["server.address"] = parts.hostname
            if parts.port:
                self.attributes["server.port"] = parts.port

    def start(self, request: dict[str, Any]) -> ModelCall:
        """A call about to be made with LiteLLM's keyword arguments `request`."""
        attributes = dict(self.attributes)
        if tracing.enabled():
            if isinstance(request.get("max_tokens"), int):
                attributes["gen_ai.request.max_tokens"] = request["max_tokens"]
            if isinstance(request.get("temperature"), int | float):
                attributes["gen_ai.request.temperature"] = float(request["temperature"])
            if tracing.capture_content():
                messages = redact(json.dumps(request.get("messages"), default=str), self.secrets)
                attributes["gen_ai.input.messages"] = tracing.text(messages)
        return ModelCall(self.model_id, self.price, attributes, self.secrets)

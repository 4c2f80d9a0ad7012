"""The LiteLLM model of a run: which one (resolve_model), how it is called (create_model,
call_limits), what its tokens cost (step_cost), and a single completion outside any agent
(complete: a knowledge review, a job's checks writer and its repairs).

Importing this module makes LiteLLM do no work for callbacks nobody registered (see below).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import litellm
from litellm.litellm_core_utils import streaming_handler
from smolagents import LiteLLMModel

from app.agent import calls
from app.agent.calls import CallLimits
from app.config import ModelPrice, Settings
from app.errors import AppError
from app.observability.model_calls import ModelCall, ModelCallWatch, WatchedStream

# LiteLLM would otherwise print its own hints ("Give Feedback / Get Help") to stdout.
litellm.suppress_debug_info = True
# At the end of every streamed reply LiteLLM runs its logging callbacks on a new event loop
# (asyncio.run: a selector and a socket pair made and closed per model call): a sixth of
# the backend's CPU with 50 runs at once. No callback is registered here: token counts come
# from the stream itself and costs from our own price lookup (see `_usage`, `calls.py`).
litellm.disable_streaming_logging = True


class _NoLogging:
    """Stands in for LiteLLM's logging thread pool in its stream wrapper. At the end of every
    streamed reply that pool builds the whole reply again, looks up its price and a
    diagnosis of its missing price (for a local model), and a logging payload, all for
    callbacks; none is registered here. Under load that was a tenth of the backend's CPU.
    Each task is refused as the pool itself refuses one when it is full: with a cancelled
    future, which LiteLLM expects."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        refused: Future[Any] = Future()
        refused.cancel()
        return refused


streaming_handler.executor = _NoLogging()  # type: ignore[assignment,misc]


def _no_cost_stamp(*_: Any) -> None:
    """Stands in for LiteLLM's stamping of a price into each streamed reply's usage. Steps
    are priced by `step_cost` (LLM_PRICES first); nothing reads LiteLLM's figure, and for a
    model it cannot price (any local one) LiteLLM searches its whole list for it at the
    end of every reply: 3% of the backend's CPU with 50 runs at once."""


_litellm_main = importlib.import_module("litellm.main")
setattr(_litellm_main, "_stamp_streaming_usage_cost", _no_cost_stamp)  # noqa: B010 (private)


class ModelNotOffered(AppError):
    """The model asked for is not one this server offers (or none is configured)."""


def resolve_model(settings: Settings, requested: str | None) -> str:
    """The model for a run: the one asked for if it is offered, else the default."""
    offered = settings.llm_models
    if not offered:
        raise ModelNotOffered(
            "No LLM is configured. Set LLM_MODEL (and LLM_API_KEY or the provider's key, "
            "e.g. OPENROUTER_API_KEY) in .env and restart the workbench.",
            code="no_model_configured",
        )
    if requested is None:
        return offered[0]
    if requested not in offered:
        raise ModelNotOffered(
            f"The model {requested!r} is not offered here. Choose one of: {', '.join(offered)}.",
            code="unknown_model",
        )
    return requested


def create_model(settings: Settings, model_id: str) -> LiteLLMModel:
    model = LiteLLMModel(
        model_id=model_id,
        api_base=settings.LLM_API_BASE,
        api_key=settings.LLM_API_KEY,
        # Plain-string message contents: some OpenAI-compatible local servers reject parts.
        flatten_messages_as_text=True,
        # smolagents' own 429 retry waits a minute per attempt; the OpenAI client's short
        # retries of 429, 5xx and timeouts (LLM_MAX_RETRIES) are enough.
        retry=False,
        max_retries=settings.LLM_MAX_RETRIES,
        timeout=settings.LLM_TIMEOUT_SECONDS,
        max_tokens=settings.LLM_MAX_OUTPUT_TOKENS,
    )
    prices = settings.LLM_PRICES
    watch = ModelCallWatch(
        model_id,
        settings.LLM_API_BASE,
        lambda tokens_in, tokens_out: step_cost(model_id, tokens_in, tokens_out, prices),
        [settings.LLM_API_KEY],
    )
    model.client = UsageWatch(model.client, watch)
    return model


class UsageWatch:
    """LiteLLM as smolagents calls it, keeping the last stream: its raw chunks tell whether
    the server reported the tokens, or LiteLLM counted them itself (then they are
    estimated: a local server's model has a tokenizer LiteLLM may not know). Each call is
    watched for the metrics and traces (app.observability.model_calls)."""

    def __init__(self, client: Any, watch: ModelCallWatch):
        self._client = client
        self._watch = watch
        self._stream: Any = None
        self._call: ModelCall | None = None

    def completion(self, *args: Any, **kwargs: Any) -> Any:
        self.settle(None)  # a call cut short and never settled ends here at the latest
        call = self._watch.start(kwargs)
        try:
            with call.current():
                result = self._client.completion(*args, **kwargs)
        except BaseException as exc:
            call.end(exc)
            raise
        if not kwargs.get("stream"):
            self._stream = None
            call.piece(result)
            call.end()
            return result
        self._stream, self._call = result, call
        return WatchedStream(result, call)

    def close(self) -> None:
        """Close the last stream's HTTP response, here and now. Left to the garbage
        collector, a reply cut short closes whenever a collection runs: possibly inside
        httpcore's connection pool while it holds its (non-reentrant) lock, in the middle of
        the next request, which then waits for itself forever."""
        raw = getattr(self._stream, "completion_stream", None)
        close = getattr(raw, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()

    def settle(self, tokens: tuple[int, int] | None) -> None:
        """End the last call with its tokens as the step counted them (the server's, or
        estimated where a reply cut short never said them)."""
        call, self._call = self._call, None
        if call is not None:
            if tokens is not None and call.tokens is None:
                call.tokens = tokens
            call.cut()

    def server_counted(self) -> bool:
        chunks = getattr(self._stream, "chunks", None)
        if chunks is None:
            return True
        return any(_has_usage(chunk) for chunk in chunks)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _has_usage(chunk: Any) -> bool:
    usage = chunk.get("usage") if isinstance(chunk, dict) else getattr(chunk, "usage", None)
    return usage is not None


def close_stream(stream: Any, model: Any) -> None:
    """End a model's reply stream, read to its end or cut short: the generator, then its
    HTTP response (the connection closes and the server stops writing)."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()
    watch = getattr(model, "client", None)
    if isinstance(watch, UsageWatch):
        watch.close()


def settle_call(model: Any, tokens_in: int, tokens_out: int) -> None:
    """The model's last call ends with these tokens (see UsageWatch.settle)."""
    watch = getattr(model, "client", None)
    if isinstance(watch, UsageWatch):
        watch.settle((tokens_in, tokens_out))


def server_counted(model: Any) -> bool:
    watch = getattr(model, "client", None)
    return watch.server_counted() if isinstance(watch, UsageWatch) else True


def call_limits(settings: Settings, model_id: str) -> CallLimits:
    return CallLimits(
        model_id=model_id,
        api_base=settings.LLM_API_BASE,
        secrets=(settings.LLM_API_KEY,),
        timeout_seconds=settings.LLM_TIMEOUT_SECONDS,
        max_output_tokens=settings.LLM_MAX_OUTPUT_TOKENS,
        context_tokens=calls.context_tokens(model_id, settings.LLM_CONTEXT_TOKENS),
    )


async def complete(
    settings: Settings,
    model_id: str,
    messages: list[dict[str, str]],
    timeout_seconds: float | None = None,
) -> tuple[str, int, int]:
    """One chat completion with the configured server, key and limits: the reply and its
    tokens in and out (counted here when the provider says none).

    Args:
        timeout_seconds: A shorter limit than LLM_TIMEOUT_SECONDS for this call.
    """
    limits = call_limits(settings, model_id)
    timeout = settings.LLM_TIMEOUT_SECONDS
    response: Any = await litellm.acompletion(
        model=model_id,
        messages=messages,
        api_base=settings.LLM_API_BASE,
        api_key=settings.LLM_API_KEY,
        timeout=timeout if timeout_seconds is None else min(timeout, timeout_seconds),
        max_tokens=settings.LLM_MAX_OUTPUT_TOKENS,
        max_retries=settings.LLM_MAX_RETRIES,
    )
    reply = str(response.choices[0].message.content or "")
    counted = getattr(response, "usage", None)
    tokens_in = int(getattr(counted, "prompt_tokens", 0) or 0) or limits.count(messages=messages)
    tokens_out = int(getattr(counted, "completion_tokens", 0) or 0) or limits.count(text=reply)
    return reply, tokens_in, tokens_out


def step_cost(
    model_id: str, tokens_in: int, tokens_out: int, prices: dict[str, ModelPrice]
) -> float | None:
    """Cost in USD by `prices` (LLM_PRICES, per million tokens) or else LiteLLM's price list;
    None when neither knows the model."""
    price = prices.get(model_id)
    if price is not None:
        return (tokens_in * price.input + tokens_out * price.output) / 1_000_000
    if not _litellm_prices(model_id):
        return None
    try:
        prompt, completion = litellm.cost_per_token(
            model=model_id, prompt_tokens=tokens_in, completion_tokens=tokens_out
        )
    except Exception:
        return None
    return float(prompt + completion)


@functools.lru_cache(maxsize=64)
def _litellm_prices(model_id: str) -> bool:
    """Whether LiteLLM's price list knows the model. Asked about one it does not know (any
    local model), LiteLLM searches for a millisecond or more before it gives up, at every
    step of every run."""
    try:
        litellm.cost_per_token(model=model_id, prompt_tokens=1, completion_tokens=1)
    except Exception:
        return False
    return True

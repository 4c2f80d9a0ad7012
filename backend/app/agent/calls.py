"""Model calls: their limits, and their failures told in words a user can act on.

A failed call reads as one sentence: what failed (connection, timeout, key, rate limit,
server error, context), which server (the host of LLM_API_BASE, or the provider; never a
key) and what to try. The raw exception goes to the log only.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
import litellm
from litellm import exceptions as errors
from smolagents.utils import AgentError, AgentGenerationError

log = logging.getLogger(__name__)

# Shorter "keys" (`x`, `none`) are no secrets worth hiding; replacing them would shred
# every message that happens to contain those letters.
MIN_SECRET_CHARS = 8
# How much of the provider's own message a sentence quotes.
QUOTED_CHARS = 300
_PREAMBLE = re.compile(r"^\s*(litellm\.)?\w*(Error|Exception)\s*(:|-)\s*")
SECRET_SHAPES = re.compile(r"\b(sk|pk|rk|key|or)-[A-Za-z0-9_\-]{8,}|\bBearer\s+\S+", re.IGNORECASE)


class StepLimit(AgentError):
    """A model call ended by one of its limits, or with nothing in it: the step fails with
    this sentence and the model reads it in the next step."""


class ModelFailed(AgentGenerationError):
    """A model call failed in a way the next step cannot mend: the run ends with this
    sentence (the step that made the call records it too)."""


@dataclass(frozen=True)
class CallLimits:
    """What bounds one model call, and what a failure of it is told with."""

    model_id: str
    api_base: str | None
    secrets: tuple[str | None, ...]
    timeout_seconds: float
    max_output_tokens: int
    context_tokens: int | None

    def failure(self, exc: BaseException) -> str:
        return failure_sentence(
            exc,
            model_id=self.model_id,
            api_base=self.api_base,
            secrets=list(self.secrets),
            timeout_seconds=self.timeout_seconds,
            context_tokens=self.context_tokens,
        )

    def count(self, messages: list[dict] | None = None, text: str | None = None) -> int:
        """Tokens by the model's tokenizer where LiteLLM has it (else its default one)."""
        try:
            return int(litellm.token_counter(model=self.model_id, messages=messages, text=text))
        except Exception:
            chars = len(text or "") + sum(len(str(m.get("content", ""))) for m in messages or [])
            return max(1, chars // 4)


def redact(text: str, secrets: list[str | None]) -> str:
    """`text` without the given secrets (whole values of MIN_SECRET_CHARS or more) and
    without anything shaped like an API key or a bearer token."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, "[redacted]")
    return SECRET_SHAPES.sub("[redacted]", text)


def server_name(model_id: str, api_base: str | None) -> str:
    """The server a model call goes to, as a user would name it: "the model server at
    host:port" for LLM_API_BASE, else "the <provider> API"."""
    if api_base:
        parts = urlsplit(api_base if "//" in api_base else f"http://{api_base}")
        return f"the model server at {parts.netloc or api_base}"
    try:
        provider = litellm.get_llm_provider(model_id)[1]
    except Exception:
        provider = model_id.split("/", 1)[0] if "/" in model_id else "model provider's"
    return f"the {provider} API"


def context_overflow(tokens: int | None) -> str:
    size = f" of {tokens:,} tokens" if tokens else ""
    return (
        f"The conversation no longer fits the model's context{size}. Start a new session or "
        "ask a narrower question; a local server can be given a larger context (then set "
        "LLM_CONTEXT_TOKENS to it)."
    )


def failure_sentence(
    exc: BaseException,
    *,
    model_id: str,
    api_base: str | None,
    secrets: list[str | None],
    timeout_seconds: float,
    context_tokens: int | None,
) -> str:
    """What went wrong with a model call, in one sentence with the fix; the raw exception
    is logged (redacted), never shown."""
    log.warning("model call to %s failed: %s", model_id, redact(repr(exc), secrets)[:2000])
    where = server_name(model_id, api_base)
    said = _provider_said(exc, secrets)
    quoted = f" ({said})" if said else ""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, errors.ContextWindowExceededError):
        return context_overflow(context_tokens)
    if isinstance(exc, errors.MidStreamFallbackError):
        return (
            f"{where.capitalize()} closed the connection in the middle of its reply: it may "
            "have stopped or crashed. Check that it is running, then ask again."
        )
    if isinstance(exc, errors.Timeout):
        return (
            f"{where.capitalize()} timed out: it sent nothing for LLM_TIMEOUT_SECONDS "
            f"({timeout_seconds:g} s). It may be overloaded or stuck; try again, or raise "
            "LLM_TIMEOUT_SECONDS for a slow server."
        )
    unreachable = _unreachable(exc)
    if unreachable:
        return f"Could not reach {where} ({unreachable}). Check that it is running and that " + (
            "LLM_API_BASE points at it." if api_base else "this machine can reach it."
        )
    if isinstance(exc, errors.AuthenticationError | errors.PermissionDeniedError):
        return (
            f"{where.capitalize()} refused the API key (HTTP {status}){quoted}. Check "
            "LLM_API_KEY, or the provider's own key variable (e.g. OPENAI_API_KEY)."
        )
    if isinstance(exc, errors.RateLimitError):
        return (
            f"{where.capitalize()} is limiting requests (HTTP 429){quoted}. Wait a minute "
            "and ask again, or raise the account's limits."
        )
    if isinstance(exc, errors.NotFoundError):
        return (
            f"{where.capitalize()} does not know the model {model_id!r} (HTTP 404){quoted}. "
            "Check LLM_MODEL (and LLM_MODELS) against the models it serves."
        )
    if isinstance(status, int) and status >= 500:
        return (
            f"{where.capitalize()} failed with a server error (HTTP {status}){quoted}. "
            "Try again in a moment; if it persists, check the server."
        )
    if isinstance(status, int):
        return (
            f"{where.capitalize()} refused the request (HTTP {status}){quoted}. Check the "
            "model's settings (LLM_MODEL, LLM_API_BASE)."
        )
    return f"The call to {where} failed{quoted}. Check the server and ask again."


def _unreachable(exc: BaseException) -> str | None:
    """Why no connection could be made ("connection refused", …), if that is what failed.
    LiteLLM reports it as an APIConnectionError or, for some providers, as a 500
    "Connection error." whose cause is the client's connect error."""
    seen: BaseException | None = exc
    for _ in range(12):
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError) or "connection refused" in str(seen).lower():
            return "connection refused"
        if isinstance(seen, httpx.ConnectTimeout):
            return "the connection timed out"
        if isinstance(seen, httpx.ConnectError):
            return "no connection"
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, errors.APIConnectionError) or "Connection error." in str(exc):
        return "no connection"
    return None


def _provider_said(exc: BaseException, secrets: list[str | None]) -> str:
    """The provider's own message, short, without litellm's class-name preamble."""
    text = str(getattr(exc, "message", None) or exc)
    while True:  # "litellm.AuthenticationError: AuthenticationError: OpenAIException - …"
        shorter = _PREAMBLE.sub("", text, count=1)
        if shorter == text:
            break
        text = shorter
    text = " ".join(redact(text, secrets).split())
    return text[:QUOTED_CHARS] + ("…" if len(text) > QUOTED_CHARS else "")


def context_tokens(model_id: str, configured: int | None) -> int | None:
    """The model's context window in tokens: LLM_CONTEXT_TOKENS, else LiteLLM's model
    list; None when neither knows it."""
    if configured:
        return configured
    return _listed_context_tokens(model_id)


@functools.lru_cache(maxsize=64)
def _listed_context_tokens(model_id: str) -> int | None:
    """LiteLLM's list does not change while we run; asked about a model it does not know
    (any local one), it searches the whole list before it gives up, at every run."""
    try:
        info = litellm.get_model_info(model_id)
    except Exception:
        return None
    size = info.get("max_input_tokens") or info.get("max_tokens")
    return int(size) if size else None

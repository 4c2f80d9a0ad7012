"""A model call does no more than the run needs: no LiteLLM logging work per reply, and no
search of LiteLLM's price list, at every step, for a model it does not know."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import litellm
import pytest
from litellm.litellm_core_utils.litellm_logging import Logging
from smolagents.models import ChatMessage, MessageRole

from app.agent.calls import context_tokens
from app.agent.model import create_model, step_cost
from app.config import Settings
from tests.support.llm import ScriptedLLM, code_reply


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def _calls(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Each call of `owner.name` from now on (its arguments), passed on to the real one."""
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_streamed_reply_runs_no_logging_work_and_still_counts_its_tokens(
    llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    handled = _calls(monkeypatch, Logging, "success_handler")
    priced: list[Any] = []
    monkeypatch.setattr(
        Logging, "response_cost_calculator", lambda self, **kwargs: priced.append(kwargs)
    )
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, LLM_MODEL="openai/scripted", LLM_API_BASE=llm.api_base, LLM_API_KEY="x"
    )
    model = create_model(settings, "openai/scripted")
    reply = code_reply("print(1 + 1)", "Add them.")
    llm.script(reply, reply)
    for _ in range(2):
        message = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "Go"}])
        deltas = list(model.generate_stream([message]))
        assert "".join(d.content or "" for d in deltas) == reply
        usage = [d.token_usage for d in deltas if d.token_usage is not None]
        assert usage and usage[-1].output_tokens > 0  # as the server counted them
    assert handled == []
    # LiteLLM's own price of each whole reply: nothing reads it.
    assert [p for p in priced if isinstance(p.get("result"), litellm.ModelResponse)] == []


def test_a_model_litellm_does_not_list_is_looked_up_once_for_its_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _calls(monkeypatch, litellm, "get_model_info")
    for _ in range(3):
        assert context_tokens("openai/not-a-listed-model-8", None) is None
    assert [args[0] for args, _ in asked] == ["openai/not-a-listed-model-8"]
    assert context_tokens("openai/not-a-listed-model-8", 32_000) == 32_000  # LLM_CONTEXT_TOKENS
    listed = context_tokens("gpt-4o-mini", None)
    assert listed is not None and listed > 100_000
    assert context_tokens("gpt-4o-mini", None) == listed


def test_a_model_litellm_cannot_price_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _calls(monkeypatch, litellm, "cost_per_token")
    for _ in range(3):
        assert step_cost("openai/not-a-listed-model-7", 1000, 100, {}) is None
    assert [kwargs["model"] for _, kwargs in asked] == ["openai/not-a-listed-model-7"]
    # A listed model is priced at every step, by its own tokens.
    first = step_cost("gpt-4o-mini", 1000, 100, {})
    second = step_cost("gpt-4o-mini", 2000, 200, {})
    assert first is not None and second == pytest.approx(2 * first)


# A fresh interpreter: start-up's warm-up (or none), then a first model call and its token
# count as a run makes them. What the call still had to import is printed.
FIRST_CALL = """
import json, sys
from smolagents.models import ChatMessage, MessageRole
from app.agent import warm_up
from app.agent.model import call_limits, create_model
from app.config import Settings
settings = Settings(
    _env_file=None, LLM_MODEL="openai/scripted", LLM_API_BASE=sys.argv[1], LLM_API_KEY="x"
)
if sys.argv[2] == "warm":
    warm_up.first_model_call(settings)
before = set(sys.modules)
message = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "Go"}])
call_limits(settings, "openai/scripted").count(messages=[{"role": "user", "content": "Go"}])
model = create_model(settings, "openai/scripted")
text = "".join(d.content or "" for d in model.generate_stream([message]))
print(json.dumps({"text": text, "imported": sorted(set(sys.modules) - before)}))
"""


def _first_call(llm: ScriptedLLM, warm: bool) -> dict[str, Any]:
    llm.script(code_reply("print(2)", "Two."))
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL, llm.api_base, "warm" if warm else "cold"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_after_the_start_up_warm_up_a_first_model_call_loads_nothing_more(
    llm: ScriptedLLM,
) -> None:
    cold = _first_call(llm, warm=False)
    assert "openai.resources.chat" in cold["imported"]  # what the warm-up is for
    warm = _first_call(llm, warm=True)
    assert warm["text"] == code_reply("print(2)", "Two.")
    assert llm.prompts() == ["Go"]  # the warm-up never called the configured server
    loaded = [m for m in warm["imported"] if m.split(".")[0] in {"openai", "litellm", "tiktoken"}]
    assert loaded == []

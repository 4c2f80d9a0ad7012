"""A model call does no more than the run needs: no LiteLLM logging work per reply, and no
search of LiteLLM's price list, at every step, for a model it does not know."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import litellm
import pytest
from litellm.litellm_core_utils.litellm_logging import Logging
from smolagents.models import ChatMessage, MessageRole

from app.agent.build import create_model, step_cost
from app.config import Settings
from tests.support.llm import ScriptedLLM, code_reply


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def test_a_streamed_reply_runs_no_logging_work_and_still_counts_its_tokens(
    llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    handled: list[Any] = []
    real = Logging.success_handler

    def counted(self: Logging, *args: Any, **kwargs: Any) -> Any:
        handled.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Logging, "success_handler", counted)
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


def test_a_model_litellm_cannot_price_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    real = litellm.cost_per_token

    def counted(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs["model"])
        return real(*args, **kwargs)

    monkeypatch.setattr(litellm, "cost_per_token", counted)
    for _ in range(3):
        assert step_cost("openai/not-a-listed-model-7", 1000, 100, {}) is None
    assert asked == ["openai/not-a-listed-model-7"]
    # A listed model is priced at every step, by its own tokens.
    first = step_cost("gpt-4o-mini", 1000, 100, {})
    second = step_cost("gpt-4o-mini", 2000, 200, {})
    assert first is not None and second == pytest.approx(2 * first)

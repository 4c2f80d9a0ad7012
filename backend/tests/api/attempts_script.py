"""The scripted model's side of questions asked with several attempts: each attempt is
answered by its own script, found by the strategy its system prompt names
(app.attempts.strategies.MARKER); the judge's prompts by their marker."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from app.attempts.dissent import DISSENT_MARKER
from app.attempts.judge import JUDGE_MARKER
from app.attempts.strategies import MARKER
from tests.support.llm import HttpError, Reply, Silence

# The strategies of attempts 1, 2, 3 (app.attempts.strategies.STRATEGIES).
FIRST, SECOND, THIRD = "pandas", "sql", "cross-check"
Scripted = str | HttpError | Silence | Callable[[], str]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


class ByAttempt:
    """The reply to each request: the next of its attempt's script (by how many replies
    that attempt's agent has had), the judge's, or the dissent explainer's (by default an
    empty reply: the verdict keeps the vote's own text)."""

    def __init__(
        self,
        scripts: dict[str, Sequence[Scripted]],
        judge: Sequence[str] = (),
        dissent: Sequence[str | HttpError] = (),
    ) -> None:
        self.scripts = scripts
        self.judge = list(judge)
        self.judge_prompts: list[str] = []
        self.dissent = list(dissent)
        self.dissent_prompts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]]) -> str | HttpError | Silence:
        text = "\n".join(_text(m.get("content")) for m in messages)
        if JUDGE_MARKER in text:
            with self.lock:
                self.judge_prompts.append(text)
                return self.judge.pop(0) if self.judge else '{"better": "unsure"}'
        if DISSENT_MARKER in text:
            with self.lock:
                self.dissent_prompts.append(text)
                return self.dissent.pop(0) if self.dissent else ""
        found = re.search(re.escape(MARKER) + r" ([\w-]+)\.", text)
        assert found, "a request of no attempt"
        script = self.scripts[found.group(1)]
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        reply = script[min(turn, len(script) - 1)]
        return reply() if callable(reply) else reply


def responder(
    scripts: dict[str, Sequence[Scripted]],
    judge: Sequence[str] = (),
    dissent: Sequence[str | HttpError] = (),
) -> ByAttempt:
    return ByAttempt(scripts, judge, dissent)


__all__ = ["FIRST", "SECOND", "THIRD", "ByAttempt", "Reply", "responder"]

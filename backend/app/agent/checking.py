"""The check of a final answer: a second model call that reads the question, the steps'
code and outputs, and the answer, and approves it or says what to revise.

It runs in the agent's thread as a smolagents final-answer check (WorkbenchAgent turns what
it returns into the step's error, which the model reads before it tries again).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from smolagents.memory import ActionStep, AgentMemory
from smolagents.models import ChatMessage, MessageRole, Model

from app.agent import prompting
from app.agent.calls import ModelFailed
from app.observability import tracing

log = logging.getLogger(__name__)

REASON_CHARS = 1000
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class Verdict:
    verdict: str  # "approve" or "revise"
    reason: str
    tokens_in: int
    tokens_out: int
    final: bool  # no revision is left: the answer stands whatever the verdict


def parse_verdict(text: str) -> tuple[str, str]:
    """The verdict and reason in the checker's reply: its JSON object, or failing that the
    first of the words approve / revise it uses, with the text as the reason."""
    found = _OBJECT.search(text)
    if found:
        try:
            data = json.loads(found.group(0))
        except ValueError:
            data = None
        if isinstance(data, dict) and str(data.get("verdict", "")).lower() in (
            "approve",
            "revise",
        ):
            return str(data["verdict"]).lower(), str(data.get("reason") or "").strip()[
                :REASON_CHARS
            ]
    words = re.findall(r"\b(approve|revise)\b", text.lower())
    verdict = words[0] if words else "approve"
    return verdict, text.strip()[:REASON_CHARS]


class AnswerCheck:
    """For `CodeAgent(final_answer_checks=[...])`: checks each final answer; after `rounds`
    revisions the answer stands, and its verdict is still reported."""

    def __init__(
        self,
        model: Model,
        question: str,
        rounds: int,
        on_verdict: Callable[[Verdict], None],
        on_tokens: Callable[[int, int], None] | None = None,
    ):
        self.model = model
        self.question = question
        self.rounds = rounds
        self.revisions = 0
        self.on_verdict = on_verdict
        self.on_tokens = on_tokens

    def __call__(self, final_answer: Any, memory: AgentMemory, agent: Any = None) -> str | None:
        with tracing.span("verify", {"workbench.verify.round": self.revisions + 1}) as span:
            problem = self._check(final_answer, memory, agent)
            if span is not None:
                span.set_attribute("workbench.verify.revision_asked", problem is not None)
            return problem

    def _check(self, final_answer: Any, memory: AgentMemory, agent: Any) -> str | None:
        steps = [s for s in memory.steps if isinstance(s, ActionStep) and s.code_action]
        shown = [
            prompting.CheckedStep(
                s.step_number,
                s.code_action or "",
                s.observations or "",
                str(s.error) if s.error else None,
            )
            for s in steps
        ]
        prompt = prompting.render_check(self.question, shown, str(final_answer))
        message = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": prompt}])
        try:
            reply = self.model.generate([message])
        except Exception as exc:  # the provider failed: the run fails as on any model call
            limits = getattr(agent, "limits", None)
            said = limits.failure(exc) if limits else f"The model provider failed: {exc}"
            raise ModelFailed(said, agent.logger) from exc
        usage = reply.token_usage
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        if self.on_tokens is not None:
            self.on_tokens(tokens_in, tokens_out)
        verdict, reason = parse_verdict(reply.content if isinstance(reply.content, str) else "")
        final = self.revisions >= self.rounds
        self.on_verdict(Verdict(verdict, reason, tokens_in, tokens_out, final))
        if verdict == "approve" or final:
            return None
        self.revisions += 1
        return (
            "Your final answer was checked before the user saw it, and the check asks for a "
            f"revision: {reason or 'no reason given'}\n"
            "Fix what it points out (run more code if you need to), then call final_answer "
            "again with the corrected answer."
        )

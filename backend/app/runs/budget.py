"""What sessions and projects have cost, and the project budgets that bound it.

A run's tokens and cost are stored on the run as it goes (each step); a session's and a
project's totals are sums over their runs. A project may have a budget in USD, in tokens,
or both: a query is refused once the project has reached it, and a run that crosses it
stops at its next step boundary (BudgetGuard, in the agent's thread).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

from smolagents.memory import ActionStep, PlanningStep

from app.agent.model import step_cost
from app.config import ModelPrice
from app.models import Project
from app.runs.errors import BudgetExceeded


@dataclass(frozen=True)
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    # None while no run had a known price (a model neither LiteLLM nor LLM_PRICES lists).
    cost_usd: float | None = None

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


def _money(value: float) -> str:
    """$12.50, $0.25, $0.0031, $0.00001: cents, or two significant digits of a smaller sum."""
    if value >= 0.01 or value <= 0:
        return f"${value:,.2f}"
    decimals = 1 - math.floor(math.log10(value))
    return f"${value:.{decimals}f}".rstrip("0")


@dataclass(frozen=True)
class Remaining:
    """What a run may still spend of its project's budget (None: no bound of that kind)."""

    usd: float | None
    tokens: int | None


def remaining(project: Project, used: Usage) -> Remaining:
    """What is left of the project's budget.

    Raises:
        BudgetExceeded: Nothing is (the project takes no more questions).
    """
    if project.budget_usd is not None and (used.cost_usd or 0.0) >= project.budget_usd:
        raise BudgetExceeded(
            f"This project has used {_money(used.cost_usd or 0.0)} of its "
            f"{_money(project.budget_usd)} budget, so it takes no more questions. Its owner "
            "can raise or remove the budget in the project's settings."
        )
    if project.budget_tokens is not None and used.tokens >= project.budget_tokens:
        raise BudgetExceeded(
            f"This project has used {used.tokens:,} of its {project.budget_tokens:,} token "
            "budget, so it takes no more questions. Its owner can raise or remove the budget "
            "in the project's settings."
        )
    return Remaining(
        usd=None if project.budget_usd is None else project.budget_usd - (used.cost_usd or 0.0),
        tokens=None if project.budget_tokens is None else project.budget_tokens - used.tokens,
    )


# A run's tokens in, tokens out and cost so far (None while no call had a known price).
Totals = tuple[int, int, float | None]


class Spending:
    """A run's tokens and cost, each model call counted once, here: in the agent's thread,
    as it hands each step, plan or answer check to the event loop (which records the totals
    handed with it). The same count interrupts the agent once the project's budget is
    crossed: the step that crossed it is kept, no further step starts."""

    def __init__(
        self,
        model_id: str,
        left: Remaining,
        prices: dict[str, ModelPrice],
        start: Totals = (0, 0, None),
    ):
        """Args:
        left: What the run may still spend of its project's budget.
        start: The run's totals so far (a run that waited for the user goes on from them).
        """
        self.model_id = model_id
        self.left = left
        self.prices = prices
        self.tokens_in, self.tokens_out, self.cost_usd = start
        self.tokens = 0  # since `start`: what the budget is compared with
        self.cost = 0.0
        self._counted: set[int] = set()  # steps (smolagents yields the last twice at max steps)
        self._lock = threading.Lock()
        self.exceeded: str | None = None

    def totals(self) -> Totals:
        with self._lock:
            return self.tokens_in, self.tokens_out, self.cost_usd

    def add(self, tokens_in: int, tokens_out: int) -> str | None:
        """Count one model call; the reason to stop if the budget is now crossed."""
        cost = step_cost(self.model_id, tokens_in, tokens_out, self.prices)
        with self._lock:
            self.tokens_in += tokens_in
            self.tokens_out += tokens_out
            if cost is not None:
                self.cost_usd = (self.cost_usd or 0.0) + cost
            self.tokens += tokens_in + tokens_out
            self.cost += cost or 0.0
            if self.exceeded is None:
                if self.left.usd is not None and self.cost >= self.left.usd:
                    self.exceeded = (
                        f"The project's budget ran out during this run (it spent "
                        f"{_money(self.cost)}, {_money(max(self.left.usd, 0.0))} was left), so "
                        "it stopped after its last step. Its owner can raise the budget."
                    )
                elif self.left.tokens is not None and self.tokens >= self.left.tokens:
                    self.exceeded = (
                        f"The project's token budget ran out during this run (it used "
                        f"{self.tokens:,} tokens, {max(self.left.tokens, 0):,} were left), so "
                        "it stopped after its last step. Its owner can raise the budget."
                    )
            return self.exceeded

    def count(self, tokens_in: int, tokens_out: int, agent: Any) -> None:
        """Count a model call of `agent`'s; past the budget, no further step starts."""
        if self.add(tokens_in, tokens_out):
            agent.interrupt()  # checked before the next step's model call

    def count_step(self, item: object, agent: Any) -> Totals:
        """Count the model call of a step or plan `agent` yielded (anything else costs
        nothing); the run's totals with it."""
        if (
            isinstance(item, ActionStep | PlanningStep)
            and item.token_usage is not None
            and id(item) not in self._counted
        ):
            self._counted.add(id(item))
            self.count(item.token_usage.input_tokens, item.token_usage.output_tokens, agent)
        return self.totals()

"""What a question's attempts would spend, and the refusal of one whose attempts would
cross the project's budget (before anything runs; a single attempt is bounded as any run
is: refused once the budget is spent, stopped when it crosses it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import Run, RunKind, RunStatus, Session
from app.runs.budget import Remaining, _money
from app.runs.errors import BudgetExceeded

# Per attempt when the project has answered nothing yet: a few steps of a short analysis.
DEFAULT_TOKENS = 12_000
RECENT_RUNS = 20


@dataclass(frozen=True)
class Estimate:
    tokens: int  # per attempt
    cost_usd: float | None  # per attempt (None: no price known)


async def per_attempt(factory: async_sessionmaker[AsyncSession], project_id: uuid.UUID) -> Estimate:
    """The mean spend of the project's recent answered questions (each attempt of a run
    with several counted apart), or DEFAULT_TOKENS."""
    async with factory() as db:
        recent = (
            select(
                (Run.tokens_in + Run.tokens_out).label("tokens"),
                Run.cost_usd.label("cost"),
                Run.attempts.label("attempts"),
            )
            .join(Session, Session.id == Run.session_id)
            .where(
                Session.project_id == project_id,
                Run.kind == RunKind.question,
                Run.status == RunStatus.succeeded,
            )
            .order_by(Run.created_at.desc())
            .limit(RECENT_RUNS)
        )
        rows = (await db.execute(recent)).all()
    if not rows:
        return Estimate(DEFAULT_TOKENS, None)
    each = [max(1, len(r.attempts or [])) for r in rows]  # the attempts of each run
    tokens = sum(int(r.tokens or 0) // n for r, n in zip(rows, each, strict=True)) // len(rows)
    costs = [float(r.cost) / n for r, n in zip(rows, each, strict=True) if r.cost is not None]
    return Estimate(max(tokens, 1), sum(costs) / len(costs) if costs else None)


def refuse_over(left: Remaining, estimate: Estimate, attempts: int) -> None:
    """Raises BudgetExceeded (with the estimate) if `attempts` attempts would likely spend
    more than is `left` of the project's budget."""
    tokens = estimate.tokens * attempts
    if left.tokens is not None and tokens > left.tokens:
        raise BudgetExceeded(
            f"{attempts} attempts would use about {tokens:,} tokens (about "
            f"{estimate.tokens:,} each, from this project's recent questions), and "
            f"{max(left.tokens, 0):,} are left of its token budget. Ask with fewer attempts, "
            "or ask the project's owner to raise the budget."
        )
    if left.usd is not None and estimate.cost_usd is not None:
        cost = estimate.cost_usd * attempts
        if cost > left.usd:
            raise BudgetExceeded(
                f"{attempts} attempts would cost about {_money(cost)} (about "
                f"{_money(estimate.cost_usd)} each, from this project's recent questions), "
                f"and {_money(max(left.usd, 0.0))} is left of its budget. Ask with fewer "
                "attempts, or ask the project's owner to raise the budget."
            )

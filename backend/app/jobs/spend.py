"""A model call made for a job (the checks' writer, a repair) counted against its project's
budget, as a question's are: a project's usage is the sum of its sessions' runs, so the
call's tokens and cost are added to a run of the job's session (the sandbox run that tried
what the model wrote), and a call is not made once the budget is spent.

    await spend.check_budget(factory, session_id)        # BudgetExceeded when spent
    reply = await spend.ask(factory, settings, model_id, messages, run_id)  # charged to run_id
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.agent.model import complete, step_cost
from app.config import ModelPrice, Settings
from app.models import Project, Run, Session
from app.runs import budget
from app.runs.repository import usage


async def check_budget(factory: async_sessionmaker[AsyncSession], session_id: uuid.UUID) -> None:
    """Refuse a model call when the session's project has spent its budget.

    Raises:
        BudgetExceeded: with the sentence a question gets.
    """
    async with factory() as db:
        session = await db.get(Session, session_id)
        project = await db.get(Project, session.project_id) if session is not None else None
        if project is None or (project.budget_usd is None and project.budget_tokens is None):
            return
        used = (await usage.by_project(db, [project.id])).get(project.id, budget.Usage())
    budget.remaining(project, used)


async def charge(
    factory: async_sessionmaker[AsyncSession],
    run_id: uuid.UUID,
    model_id: str,
    tokens_in: int,
    tokens_out: int,
    prices: dict[str, ModelPrice],
) -> None:
    """Add a model call's tokens (and its cost, when the model's price is known) to the run
    `run_id` of the job's session, so that the project's usage and budget count it."""
    cost = step_cost(model_id, tokens_in, tokens_out, prices)
    values: dict[str, Any] = {
        "tokens_in": Run.tokens_in + tokens_in,
        "tokens_out": Run.tokens_out + tokens_out,
    }
    if cost is not None:
        values["cost_usd"] = func.coalesce(Run.cost_usd, 0.0) + cost
    async with factory() as db:
        await db.execute(update(Run).where(Run.id == run_id).values(**values))
        await db.commit()


async def ask(
    factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    model_id: str,
    request: list[dict[str, str]],
    charged: uuid.UUID,
) -> str:
    """The model's reply to `request`; its tokens (and cost) are charged to the run `charged`
    of the job's session, so the project's budget counts them."""
    reply, tokens_in, tokens_out = await complete(settings, model_id, request)
    await charge(factory, charged, model_id, tokens_in, tokens_out, settings.LLM_PRICES)
    return reply

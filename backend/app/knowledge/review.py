"""The review pass: after a run succeeds, one model call over its record proposes knowledge
items worth keeping; a person approves them (nothing proposed reaches a prompt before).

It never delays `run.finished`: the run's execution hands it the run's id after that event
is out (`submit`), and it runs as a task of its own: bounded (KNOWLEDGE_REVIEW_CONCURRENCY
at once on a replica; a run that ends while they are all busy is not reviewed), with its
own timeout (KNOWLEDGE_REVIEW_TIMEOUT_SECONDS), holding no database connection while it
waits for the model. Its tokens and cost are added to the run's (so to the session's and
the project's usage and budget); a project whose budget is used up is not reviewed.

What it proposes (see docs/knowledge-review.md): only from a succeeded run; a lesson only
when the steps show the correction worked (`review_prompt.corrections`); nothing the
project already knows (same kind, near-same title or body, whatever its status); every
proposal screened (`screening.screen`): credentials scrubbed, rows of data left out,
instructions to the agent flagged.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import uuid
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app import audit
from app.agent.model import complete, step_cost
from app.config import Settings
from app.errors import PayloadTooLarge, Unprocessable
from app.knowledge import screening, service
from app.knowledge.review_prompt import Proposal, confirmed, corrections, messages, parse
from app.knowledge.schemas import KnowledgeOut
from app.models import (
    CheckRun,
    KnowledgeItem,
    KnowledgeStatus,
    Project,
    Run,
    RunStatus,
    RunStep,
    Session,
)
from app.runs import budget
from app.runs.errors import BudgetExceeded
from app.runs.repository import usage

log = logging.getLogger(__name__)

# How alike two titles (or bodies) of the same kind must be to be the same knowledge: most
# of their words shared, the same numbers, and nearly the same text.
SAME_WORDS = 0.8
SAME_TEXT = 0.85
_WORDS = re.compile(r"[^a-z0-9]+")


def _words(text: str) -> list[str]:
    return [word for word in _WORDS.split(text.lower()) if word]


def _alike(a: str, b: str) -> bool:
    """Whether two texts say the same: "`prise` is not a column: use `price`" and "'prise'
    is not a column -- use 'price'." do; "Term 1 means 1" and "Term 2 means 2" do not."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    if wa == wb:
        return True
    sa, sb = set(wa), set(wb)
    if {w for w in sa if w.isdigit()} != {w for w in sb if w.isdigit()}:
        return False
    if len(sa & sb) / len(sa | sb) < SAME_WORDS:
        return False
    return difflib.SequenceMatcher(None, " ".join(wa), " ".join(wb), autojunk=False).ratio() >= (
        SAME_TEXT
    )


def known(proposal: Proposal, existing: list[tuple[str, str, str]]) -> bool:
    """Whether the project already knows it: an item of the same kind whose title or body
    is (nearly) the same."""
    return any(
        kind == proposal.kind and (_alike(title, proposal.title) or _alike(body, proposal.body))
        for kind, title, body in existing
    )


class KnowledgeReview:
    """The review passes of one replica's runs."""

    def __init__(self, settings: Settings, factory: async_sessionmaker[AsyncSession]):
        self.settings = settings
        self.factory = factory
        self.tasks: set[asyncio.Task[list[KnowledgeOut]]] = set()

    def submit(
        self, run_id: uuid.UUID, after: asyncio.Event | None = None
    ) -> asyncio.Task[list[KnowledgeOut]] | None:
        """Review the run in the background, once `after` is set (None: not reviewed, the
        setting is off or too many passes are under way). Submitted before the run's end is
        announced and started after it, a pass is under way (in `tasks`) by the time anyone
        hears the run ended, and never delays that."""
        if not self.settings.KNOWLEDGE_REVIEW:
            return None
        if len(self.tasks) >= self.settings.KNOWLEDGE_REVIEW_CONCURRENCY:
            log.warning(
                "run %s is not reviewed for knowledge: %d review passes are under way "
                "(KNOWLEDGE_REVIEW_CONCURRENCY)",
                run_id,
                len(self.tasks),
            )
            return None
        task = asyncio.create_task(self._bounded(run_id, after), name=f"review-{run_id}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _bounded(self, run_id: uuid.UUID, after: asyncio.Event | None) -> list[KnowledgeOut]:
        if after is not None:
            await after.wait()
        timeout = self.settings.KNOWLEDGE_REVIEW_TIMEOUT_SECONDS
        try:
            return await asyncio.wait_for(self.review(run_id), timeout)
        except TimeoutError:
            log.warning(
                "the review pass of run %s took over %g s: nothing proposed", run_id, timeout
            )
        except Exception:
            log.exception("the review pass of run %s failed: nothing proposed", run_id)
        return []

    async def close(self) -> None:
        """Stop the passes under way (the app is shutting down)."""
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def review(self, run_id: uuid.UUID) -> list[KnowledgeOut]:
        """Review one run now: the items it proposed (stored as `proposed`)."""
        settings = self.settings
        async with self.factory() as db:
            run = await db.get(Run, run_id)
            if run is None or run.status != RunStatus.succeeded:
                return []
            project = await db.scalar(
                select(Project)
                .join(Session, Session.project_id == Project.id)
                .where(Session.id == run.session_id)
            )
            if project is None:
                return []
            if await db.scalar(select(CheckRun.id).where(CheckRun.session_id == run.session_id)):
                # A check measures the knowledge; it does not add to it.
                log.info("run %s is not reviewed for knowledge: it answered a check", run_id)
                return []
            try:
                budget.remaining(project, await usage.toward_budget(db, project))
            except BudgetExceeded:
                log.info(
                    "run %s is not reviewed for knowledge: its project's budget is spent", run_id
                )
                return []
            steps = list(
                await db.scalars(
                    select(RunStep).where(RunStep.run_id == run_id).order_by(RunStep.index)
                )
            )
            limit = settings.KNOWLEDGE_REVIEW_MAX_PROPOSALS
            request = messages(run, steps, limit)
            model_id, project_id, query = run.model, project.id, run.query
        # No connection is held while the model answers.
        reply, tokens_in, tokens_out = await self._ask(model_id, request)
        cost = step_cost(model_id, tokens_in, tokens_out, settings.LLM_PRICES)
        shown = corrections(steps)
        secrets: list[str | None] = [*settings.secret_values()]
        kept: list[tuple[Proposal, screening.Screened]] = []
        for proposal in parse(reply, limit):
            if not confirmed(proposal, shown):
                log.info(
                    "run %s: a %s proposal no step confirms was left out", run_id, proposal.kind
                )
                continue
            screened = screening.screen(proposal.title, proposal.body, secrets)
            if screened is not None:
                kept.append((Proposal(proposal.kind, screened.title, screened.body), screened))
        async with self.factory() as db:
            await self._count(db, run_id, tokens_in, tokens_out, cost)
            owner = await db.get(Project, project_id)
            if owner is None:  # deleted meanwhile
                return []
            items = await self._store(db, owner, run_id, query, kept)
            shown_items = await service.out(db, items)
            await db.commit()
            return shown_items

    async def _ask(self, model_id: str, request: list[dict[str, str]]) -> tuple[str, int, int]:
        timeout = self.settings.KNOWLEDGE_REVIEW_TIMEOUT_SECONDS
        return await complete(self.settings, model_id, request, timeout)

    @staticmethod
    async def _count(
        db: AsyncSession, run_id: uuid.UUID, tokens_in: int, tokens_out: int, cost: float | None
    ) -> None:
        """The pass's tokens and cost go to the run's (its session's and project's usage)."""
        values: dict[str, Any] = {
            "tokens_in": Run.tokens_in + tokens_in,
            "tokens_out": Run.tokens_out + tokens_out,
        }
        if cost is not None:
            values["cost_usd"] = func.coalesce(Run.cost_usd, 0.0) + cost
        await db.execute(update(Run).where(Run.id == run_id).values(**values))

    async def _store(
        self,
        db: AsyncSession,
        project: Project,
        run_id: uuid.UUID,
        query: str,
        kept: list[tuple[Proposal, screening.Screened]],
    ) -> list[KnowledgeItem]:
        if not kept:
            return []
        kinds = {proposal.kind for proposal, _ in kept}
        rows = await db.execute(
            select(KnowledgeItem.kind, KnowledgeItem.title, KnowledgeItem.body).where(
                KnowledgeItem.project_id == project.id, KnowledgeItem.kind.in_(kinds)
            )
        )
        existing: list[tuple[str, str, str]] = [(k, t, b) for k, t, b in rows]
        items: list[KnowledgeItem] = []
        for proposal, screened in kept:
            if known(proposal, existing):
                continue
            existing.append((proposal.kind, proposal.title, proposal.body))
            try:
                item = await service.create_proposed(
                    db,
                    project,
                    proposal.kind,
                    proposal.title,
                    proposal.body,
                    None,
                    run_id,
                    flags=screened.flags,
                    limits=self.settings,
                )
            except Unprocessable as exc:
                log.info("run %s: a proposal was refused: %s", run_id, exc)
                continue
            except PayloadTooLarge:
                log.info("run %s: its project keeps as many knowledge items as it may", run_id)
                break
            items.append(item)
        if items:
            detail = {
                "run_id": str(run_id),
                "query": query[: audit.QUERY_CHARS],
                "titles": [item.title for item in items],
                "flagged": sum(1 for item in items if item.flags),
            }
            await audit.record(
                db, project.id, None, audit.Action.knowledge_proposed, ("run", run_id), detail
            )
        return items

    async def proposed_before(self, run: Run) -> list[KnowledgeOut]:
        """What the review pass of the session's run before `run` proposed (still waiting
        for approval): the next run's stream starts with it (knowledge.proposed)."""
        async with self.factory() as db:
            previous = (
                select(Run.id)
                .where(Run.session_id == run.session_id, Run.created_at < run.created_at)
                .order_by(Run.created_at.desc())
                .limit(1)
                .scalar_subquery()
            )
            project = select(Session.project_id).where(Session.id == run.session_id)
            items = await db.scalars(
                select(KnowledgeItem)
                .where(
                    KnowledgeItem.project_id == project.scalar_subquery(),
                    KnowledgeItem.status == KnowledgeStatus.proposed,
                    KnowledgeItem.source_run_id == previous,
                )
                .order_by(KnowledgeItem.created_at)
            )
            return await service.out(db, list(items))

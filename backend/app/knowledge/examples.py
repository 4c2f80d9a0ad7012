"""A succeeded run saved as a verified `example` item: its question shortened as the title;
the question, the code of the steps that succeeded, the SQL they ran on the project's
sources and the final answer as the body, cut to fit the item's bound."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config.knowledge import KnowledgeSettings
from app.errors import Conflict
from app.knowledge import service
from app.models import KnowledgeItem, Project, Run, RunStep, Session, User
from app.models.knowledge import KnowledgeKind
from app.models.runs import RunStatus
from app.runs.state import ACTIVE

TITLE_CHARS = 120
CUT = "\n… (cut to fit)\n"


def title_of(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1].rstrip() + "…"


def _fenced(language: str, text: str) -> str:
    return f"```{language}\n{text.strip()}\n```"


def body_of(run: Run, steps: Sequence[RunStep], max_chars: int) -> str:
    """The question, the code that worked and its SQL, and the answer, within `max_chars`
    (the code is cut first: the question and the answer are what a reader looks for)."""
    code = [s.code.strip() for s in steps if s.code and s.code.strip() and not s.error]
    sql = [
        q["sql"].strip()
        for s in steps
        if not s.error
        for q in (s.queries or [])
        if isinstance(q, dict) and q.get("sql") and not q.get("error")
    ]
    head = f"Question: {run.query.strip()}"
    tail = f"Answer: {(run.final_answer or '').strip()}"
    parts: list[str] = []
    if code:
        parts.append("Code:\n" + _fenced("python", "\n\n".join(code)))
    if sql:
        parts.append("SQL:\n" + _fenced("sql", ";\n\n".join(sql) + ";"))
    middle = "\n\n".join(parts)
    body = "\n\n".join(part for part in (head, middle, tail) if part)
    if len(body) <= max_chars:
        return body
    room = max_chars - len(head) - len(tail) - len(CUT) - 4
    if room > 0:
        return f"{head}\n\n{middle[:room]}{CUT}\n{tail}"
    return body[: max_chars - len(CUT)] + CUT.rstrip()


async def verify(
    db: AsyncSession, user: User, run: Run, limits: KnowledgeSettings
) -> KnowledgeItem:
    """Save a succeeded run as an approved `example` item of its project.

    Raises:
        Conflict: the run did not succeed, or it is saved already.
    """
    if run.status != RunStatus.succeeded:
        state = f"is {run.status}" if run.status in ACTIVE else f"ended {run.status}"
        raise Conflict(
            f"Only a run that succeeded can be saved as a verified example; this one {state}.",
            code="run_not_succeeded",
        )
    project_id = await db.scalar(select(Session.project_id).where(Session.id == run.session_id))
    project = await db.get(Project, project_id)
    assert project is not None
    saved = await db.scalar(
        select(KnowledgeItem.id).where(
            KnowledgeItem.source_run_id == run.id, KnowledgeItem.kind == KnowledgeKind.example
        )
    )
    if saved is not None:
        raise Conflict(
            f"This run is saved already as the example {saved}; edit that one.",
            code="run_already_verified",
        )
    steps = await _steps(db, run.id)
    return await service.create_example(
        db,
        project,
        user,
        title=title_of(run.query),
        body=body_of(run, steps, limits.KNOWLEDGE_ITEM_MAX_CHARS),
        source_run_id=run.id,
        limits=limits,
    )


async def _steps(db: AsyncSession, run_id: uuid.UUID) -> list[RunStep]:
    query = select(RunStep).where(RunStep.run_id == run_id).order_by(RunStep.index)
    return list(await db.scalars(query))

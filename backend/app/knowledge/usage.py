"""What a run was given of the project's knowledge, and which of it the run relied on.

`Run.knowledge` is set when the run's prompt is built: `[{item_id, title, label, used}]` in
prompt order, `used` false. When the run ends, an item counts as used when

- the final answer or the code of any step cites its label as a word (K3, [K3]: the prompt
  asks the agent to cite what it relied on), or
- the code names the item's identifier: a `column` item's column, or a `definition` whose
  term is an identifier (net_revenue), written as a whole word.

Rules, examples and lessons, and definitions of phrases, count only when cited: their words
in an answer may come from the question itself, which proves nothing.
"""

from __future__ import annotations

import re
import uuid

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.knowledge.prompt import Given
from app.models import Run, RunStep


async def record_given(db: AsyncSession, run_id: uuid.UUID, given: list[Given]) -> None:
    await db.execute(
        update(Run).where(Run.id == run_id).values(knowledge=[g.record() for g in given])
    )


def used(given: list[Given], answer: str, code: list[str]) -> list[dict[str, object]]:
    """The run's `knowledge` at its end (see the module's rule)."""
    everything = "\n".join([answer, *code])
    program = "\n".join(code)
    return [
        g.record(
            _word(g.label).search(everything) is not None
            or (g.term is not None and _word(g.term).search(program) is not None)
        )
        for g in given
    ]


async def mark_used(
    db: AsyncSession, run_id: uuid.UUID, given: list[Given], final_answer: str | None
) -> None:
    """Store which of the given items the ended run relied on (in the caller's transaction)."""
    code = [c for c in await db.scalars(select(RunStep.code).where(RunStep.run_id == run_id)) if c]
    await db.execute(
        update(Run).where(Run.id == run_id).values(knowledge=used(given, final_answer or "", code))
    )


def _word(text: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])")

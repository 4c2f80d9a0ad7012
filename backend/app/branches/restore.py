"""A branch's first run: its variables as they were when the run it continues after ended.

Where the branch was given that run's snapshot (app.branches.service), the new worker has
restored it: what the snapshot could not hold is said. Otherwise, or when the snapshot did
not load, the branch's past is *replayed* in the fresh worker before the new question: the
code of each of its steps that ran without an error, in order, each run's steps reading the
file versions that run read (app.branches.versions). Either way the branch's
`restored` says which it was and what was not brought back, and the run's stream tells it
(`state.restored`). Nothing here claims a state the worker does not have.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.branches import lineage, versions
from app.models import Run, RunStep, Session
from app.runs.data_sources import SourcesAnswerer
from app.sandbox import RestoreReport, SandboxWorker

# Code that queried a project source: replayed, it reads today's data, not that day's.
SQL_CALL = re.compile(r"\bsql\s*\(")


@dataclass
class Restored:
    """How the branch's state came back: "snapshot" or "replay", with sentences."""

    source: str
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return {"from": self.source, "notes": self.notes}


# `restored` of a branch kept standalone before its first run (app.branches.detach): its
# past is now its own runs, and its state is still to be settled. Never shown (SessionOut).
UNSETTLED = {"from": "replay", "notes": [], "unsettled": True}


def first_run(session: Session) -> bool:
    """Whether the session is a branch whose state is still to be settled."""
    if session.restored is None:
        return session.branched_after_run_id is not None
    return bool(session.restored.get("unsettled"))


def from_snapshot(report: RestoreReport | None) -> Restored | None:
    """The snapshot's restore as the branch's state, or None when it did not load."""
    if report is None or report.error:
        return None
    notes = [f"{u.describe()} could not be kept and was not restored." for u in report.unsaved]
    notes += [f"{name} was saved but could not be loaded back." for name, _ in report.failed]
    return Restored("snapshot", notes)


async def _past_code(
    factory: async_sessionmaker[AsyncSession], session: Session, run: Run
) -> list[tuple[uuid.UUID, str]]:
    """The code of the steps before `run` in the branch's history (its past) that ran
    without an error, in order."""
    async with factory() as db:
        history = lineage.history_clause(session, await lineage.segments(db, session))
        rows = await db.execute(
            select(RunStep.run_id, RunStep.code)
            .join(Run, Run.id == RunStep.run_id)
            .where(
                history,
                Run.id != run.id,
                Run.created_at <= run.created_at,
                RunStep.error.is_(None),
                RunStep.code.is_not(None),
            )
            .order_by(Run.created_at, Run.id, RunStep.index)
        )
        return [(run_id, str(code)) for run_id, code in rows if str(code).strip()]


async def replay(
    factory: async_sessionmaker[AsyncSession],
    session: Session,
    run: Run,
    worker: SandboxWorker,
    answerer: SourcesAnswerer | None,
    why: str | None,
    files: versions.Files | None = None,
) -> Restored:
    """Run the branch's past code in its worker (see module); what was and was not done.

    Args:
        factory: Database sessions.
        session: The branch.
        run: Its first run (the one that settles its state).
        worker: Its fresh worker.
        answerer: The project's data sources, for code that called sql().
        why: Why the snapshot could not be used, when there was one.
        files: Today's project files and how to place others (None: leave them as they are).
    """
    steps = await _past_code(factory, session, run)
    notes = (
        [f"The saved variables could not be loaded ({why}), so the past was replayed."]
        if why
        else []
    )
    past = list(dict.fromkeys(run_id for run_id, _ in steps))
    read = await versions.of_runs(factory, past, files.current) if files else versions.Versions()
    notes += read.notes
    placed: list[Any] | None = None  # None: the branch's files are in the workspace
    replayed, failed, questions, live = 0, 0, set(), False
    for run_id, code in steps:
        wanted = read.by_run.get(run_id)
        if files is not None and wanted is not placed:
            await files.place(wanted if wanted is not None else files.current)
            placed = wanted
        result = await asyncio.to_thread(worker.run, code, (), None, answerer)
        if result.error or result.question:
            failed += 1
            error = (result.error or "it asked the user").strip().splitlines()
            notes.append(f"A step of the past failed when replayed: {error[-1] if error else '?'}")
            continue
        replayed += 1
        questions.add(run_id)
        live = live or bool(SQL_CALL.search(code))
    if files is not None and placed is not None:  # the new question reads the branch's
        await files.place(files.current)
    runs = len(past)
    said = (
        f"Replayed {replayed} step{'' if replayed == 1 else 's'} of {len(questions)} "
        f"question{'' if len(questions) == 1 else 's'}"
    )
    if not steps:
        said = "Nothing to replay: the questions before the branch ran no code"
    elif runs > len(questions):
        said += f" ({runs - len(questions)} other question(s) had nothing that ran)"
    notes.insert(0, said + ".")
    if read.by_run:
        notes.append(
            "The replay read the file versions the original questions read; the branch's new "
            "questions read the versions its last question read, until it is moved to the "
            "latest."
        )
    if failed:
        notes.append(
            f"{failed} step{'' if failed == 1 else 's'} failed: what they made is missing."
        )
    if live:
        notes.append(
            "Queries on a live database ran again against today's data, which may differ "
            "from what the original questions saw."
        )
    return Restored("replay", notes)


async def keep(
    factory: async_sessionmaker[AsyncSession], session_id: uuid.UUID, restored: Restored
) -> None:
    """Record how the branch's state came back (once: the first run that settles it)."""
    async with factory() as db:
        await db.execute(
            update(Session).where(Session.id == session_id).values(restored=restored.record())
        )
        await db.commit()

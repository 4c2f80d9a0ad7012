"""The chosen attempt becomes the session's: its variables (the snapshot it wrote into its
space) are kept as the run's state and the session's snapshot, its files are copied into
the session's folder, its steps are numbered 1, 2, 3… as a single run's; the other
attempts' spaces (folders and workers) are removed. The run keeps every attempt and the
verdict."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update

from app.attempts import spaces
from app.attempts.driver import AttemptResult
from app.attempts.numbering import STEP_BASE
from app.models import Artifact, File, Run, RunStep, Session
from app.runs import snapshots, state_fork
from app.runs.execution import Runtime
from app.runs.workspace import snapshot_marker_path, workspace_dir

log = logging.getLogger(__name__)


async def adopt(rt: Runtime, run: Run, chosen: AttemptResult) -> None:
    """Make the chosen attempt's variables and files the session's."""
    session_id = run.session_id
    target = workspace_dir(rt.settings.DATA_DIR, session_id)
    if chosen.taken is not None and chosen.workspace is not None:
        report, allowed = chosen.taken
        kept = await rt.context.keep_state(
            run.id, session_id, chosen.workspace, chosen.snapshot, report, allowed
        )
        # The session's worker holds older variables: its next run restarts it from this
        # snapshot, moved into the session's folder now (no download then, no copy now);
        # where it cannot be moved, the next run fetches it from storage.
        marker = snapshot_marker_path(rt.settings.DATA_DIR, session_id)
        await asyncio.to_thread(marker.unlink, True)
        if kept is not None and await asyncio.to_thread(
            state_fork.move_snapshot, chosen.workspace, target, kept
        ):
            await asyncio.to_thread(snapshots.remember, marker, str(kept["generation"]))
    if chosen.workspace is not None:
        skip = frozenset(await _project_file_names(rt, run))
        await asyncio.to_thread(spaces.copy_files, chosen.workspace, target, skip)
    await _renumber(rt, run.id, chosen.number)


async def _project_file_names(rt: Runtime, run: Run) -> list[str]:
    """The names the project's files have in a workspace (every run is given them anew)."""
    async with rt.repository.factory() as db:
        names = await db.scalars(
            select(File.name)
            .join(Session, Session.project_id == File.project_id)
            .where(Session.id == run.session_id)
        )
        return list(names)


async def _renumber(rt: Runtime, run_id: uuid.UUID, attempt: int) -> None:
    """The chosen attempt's steps and artifacts numbered as a single run's."""
    low, high = STEP_BASE * attempt, STEP_BASE * (attempt + 1)
    async with rt.repository.factory() as db:
        await db.execute(
            update(RunStep)
            .where(RunStep.run_id == run_id, RunStep.attempt == attempt)
            .values(index=RunStep.index - low)
        )
        await db.execute(
            update(Artifact)
            .where(Artifact.run_id == run_id, Artifact.step > low, Artifact.step < high)
            .values(step=Artifact.step - low)
        )
        await db.commit()


async def keep(
    rt: Runtime, run_id: uuid.UUID, results: Sequence[AttemptResult], verdict: dict[str, Any]
) -> None:
    """Store the run's attempts and verdict (API.md: run.attempts, run.verdict)."""
    async with rt.repository.factory() as db:
        await db.execute(
            update(Run)
            .where(Run.id == run_id)
            .values(attempts=[r.record() for r in results], verdict=verdict)
        )
        await db.commit()


async def discard(rt: Runtime, results: Sequence[AttemptResult]) -> None:
    """Remove every attempt's space: its worker stops, its folder goes."""
    for result in results:
        try:
            await rt.sandboxes.discard(result.space)
        except Exception:
            log.exception("could not remove the space of attempt %s", result.number)

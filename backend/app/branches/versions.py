"""The project files a branch's replay reads: the versions its past's runs read.

Each run records the file versions its code read (`run_file_reads`, app.runs.repository).
Before the steps of a past run are replayed, the workspace is given those versions (the
others stay as the branch has them); after the replay, the branch's files are put back for
its new question (the versions its past read last: app.branches.pins). A version no longer
kept (pruned past FILE_VERSIONS_KEPT) or a file deleted since is said in the notes:
"sales.csv version 3 was deleted; the replay read version 5".
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.branches.pins import as_of
from app.models import File, FileVersion, Run, RunFileRead

# Puts the given files into the branch's workspace (app.runs.workspace.materialize).
Place = Callable[[list[File]], Awaitable[object]]


@dataclass
class Files:
    """Today's project files and how to put a set of them in the workspace."""

    current: list[File]
    place: Place


@dataclass
class Versions:
    """The files each past run read, as the replay gives them (see module)."""

    by_run: dict[uuid.UUID, list[File]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


async def of_runs(
    factory: async_sessionmaker[AsyncSession], run_ids: list[uuid.UUID], current: list[File]
) -> Versions:
    """For each run that read an older version than today's, the files to give it."""
    found = Versions()
    if not run_ids:
        return found
    today = {f.id: f for f in current}
    async with factory() as db:
        reads = (
            await db.execute(
                select(RunFileRead.run_id, RunFileRead.file_id, RunFileRead.version).where(
                    RunFileRead.run_id.in_(run_ids)
                )
            )
        ).all()
        older = {(fid, v) for _, fid, v in reads if fid in today and today[fid].version != v}
        kept: dict[tuple[uuid.UUID, int], FileVersion] = {}
        if older:
            rows = await db.scalars(
                select(FileVersion).where(FileVersion.file_id.in_({fid for fid, _ in older}))
            )
            kept = {(v.file_id, v.version): v for v in rows}
        gone = {fid for _, fid, _ in reads if fid not in today}
        names = await _names(db, run_ids, gone)
    said: set[str] = set()
    overrides: dict[uuid.UUID, dict[uuid.UUID, File]] = {}
    for run_id, file_id, version in reads:
        if file_id not in today:
            _say(
                found,
                said,
                f"{names.get(file_id, 'A file')} was deleted since: the replay could not read it.",
            )
            continue
        now = today[file_id]
        if now.version == version:
            continue
        stored = kept.get((file_id, version))
        if stored is None:
            _say(
                found,
                said,
                f"{now.name} version {version} was deleted; the replay read version {now.version}.",
            )
            continue
        overrides.setdefault(run_id, {})[file_id] = as_of(now, stored)
    for run_id, files in overrides.items():
        found.by_run[run_id] = [files.get(f.id, f) for f in current]
    return found


def _say(found: Versions, said: set[str], note: str) -> None:
    if note not in said:
        said.add(note)
        found.notes.append(note)


async def _names(
    db: AsyncSession, run_ids: list[uuid.UUID], file_ids: set[uuid.UUID]
) -> dict[uuid.UUID, str]:
    """The names the runs knew the (deleted) files by (`run.files`)."""
    if not file_ids:
        return {}
    wanted = {str(fid) for fid in file_ids}
    names: dict[uuid.UUID, str] = {}
    for files in await db.scalars(select(Run.files).where(Run.id.in_(run_ids))):
        for entry in files or []:
            if isinstance(entry, dict) and entry.get("file_id") in wanted and entry.get("name"):
                names[uuid.UUID(str(entry["file_id"]))] = str(entry["name"])
    return names

"""A project's over-the-bound refusal kept, so run ends stay cheap while it lasts (issue 43).

When a save is refused (`state_retention.make_room` read every state of the project to
find that, even with only each session's newest left, the project would pass
SNAPSHOT_PROJECT_MAX_MB), what it found is kept on the project (`Project.snapshot_floor`):
the *floor* — the unique chunk bytes of every session's newest state and snapshot, nothing
incoming — the largest sessions, and a *mark* of what could lower the floor: the number of
the project's sessions and states and the newest change of each (indexed aggregates, no
record read). A later run end of session S, while the mark is the same, knows that its save
would take at least `floor - (S's newest state and snapshot) + (the chunks it stored that
the project did not have)`: over the bound, it is
refused at once with the same advice, without reading the project's states. A deleted
session, a state dropped or kept, a snapshot changed: the mark differs and the next run
end plans again.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select, update

from app.models import Project, RunState, Session
from app.runs.snapshot_chunks import Factory, digests_of

# How many of the largest sessions the kept refusal names.
NAMED = 3


async def mark(db: Any, project_id: uuid.UUID) -> list[str]:
    """What could lower the project's floor, as it is now (see module)."""
    sessions = (
        await db.execute(
            select(func.count(Session.id), func.max(Session.updated_at)).where(
                Session.project_id == project_id
            )
        )
    ).one()
    states = (
        await db.execute(
            select(func.count(RunState.run_id), func.max(RunState.created_at)).where(
                RunState.project_id == project_id
            )
        )
    ).one()
    return [str(value) for value in (*sessions, *states)]


def floor_of(
    newest: list[dict[str, Any]], snapshots: list[dict[str, Any]], sizes: dict[str, int]
) -> int:
    """The unique chunk bytes the records name."""
    named: set[str] = set()
    for record in [*newest, *snapshots]:
        named |= digests_of(record)
    return sum(sizes.get(digest, 0) for digest in named)


async def keep(
    factory: Factory,
    project_id: uuid.UUID,
    seen: list[str],
    floor: int,
    largest: dict[uuid.UUID, int],
) -> None:
    """Keep a refusal's findings, with the mark read before its states were read."""
    top = sorted(largest.items(), key=lambda item: (-item[1], str(item[0])))[:NAMED]
    kept = {"mark": seen, "floor": floor, "largest": [[str(s), n] for s, n in top]}
    async with factory() as db:
        await db.execute(
            update(Project).where(Project.id == project_id).values(snapshot_floor=kept)
        )
        await db.commit()


async def still_over(
    factory: Factory,
    project_id: uuid.UUID,
    session_id: uuid.UUID,
    new_bytes: int,
    max_bytes: int,
) -> tuple[int, dict[uuid.UUID, int]] | None:
    """Whether the kept refusal still holds for a save of `session_id` that stored
    `new_bytes` of chunks the project did not have (so none of the floor's): (at least how
    many bytes the project would take, the largest sessions) when it does, else None."""
    async with factory() as db:
        kept = await db.scalar(select(Project.snapshot_floor).where(Project.id == project_id))
        if not isinstance(kept, dict) or kept.get("mark") != await mark(db, project_id):
            return None
        own = await db.scalar(
            select(RunState.bytes)
            .where(RunState.session_id == session_id)
            .order_by(RunState.created_at.desc(), RunState.run_id.desc())
            .limit(1)
        )
        snapshot = await db.scalar(select(Session.snapshot).where(Session.id == session_id))
    mine = int(own or 0) + (int(snapshot.get("bytes") or 0) if isinstance(snapshot, dict) else 0)
    least = int(kept.get("floor") or 0) - mine + new_bytes
    if least <= max_bytes:
        return None
    largest = {uuid.UUID(str(s)): int(n) for s, n in kept.get("largest") or []}
    return least, largest

"""The state at every question (issue 43, point 2), end to end on both stacks.

Each run keeps its snapshot record; an unchanged DataFrame is stored once however many runs
keep it; the state of an older run, given to another session (as a branch is), restores
exactly that run's values in a real worker; retention drops the oldest, never the latest;
the sweep never deletes a chunk a session still names; a lost or damaged chunk fails the
load clearly.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.models import Run, RunState, Session, SnapshotChunk
from app.quotas import usage as quota_usage
from app.runs import run_states, snapshot_chunks, snapshots, state_retention
from app.runs.snapshots import SnapshotDamaged
from tests.api.test_query import ask, finished, of
from tests.api.test_queue import new_session
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

BIG = (
    "import numpy as np\nimport pandas as pd\n"
    "big = pd.DataFrame({'v': np.arange(2_000_000, dtype='int64'), 'w': np.arange(2_000_000) / 7})"
    "\nn = 1"
)


def run(api: Api, llm: ScriptedLLM, session_id: str, code: str) -> str:
    """Ask a question whose one step runs `code`; the run's id."""
    llm.script(code_reply(code), final_reply("'done'"))
    events = ask(api, session_id, "Go on")
    assert finished(events)["status"] == "succeeded", [e.data for e in events]
    assert not of(events, "step.error"), of(events, "step.error")
    return str(of(events, "run.started")[0]["run_id"])


def states(live: LiveServer, session_id: str) -> dict[str, RunState]:
    async def read() -> dict[str, RunState]:
        async with live.state.session_factory() as db:
            query = select(RunState).where(RunState.session_id == uuid.UUID(session_id))
            return {str(s.run_id): s for s in await db.scalars(query)}

    return live.call(read())


def chunk_rows(live: LiveServer, project_id: str) -> dict[str, int]:
    async def read() -> dict[str, int]:
        async with live.state.session_factory() as db:
            query = select(SnapshotChunk).where(SnapshotChunk.project_id == uuid.UUID(project_id))
            return {c.sha256: c.size for c in await db.scalars(query)}

    return live.call(read())


def chunk_objects(live: LiveServer, project_id: str) -> set[str]:
    keys = live.call(live.state.storage.list_keys(f"snapshot-chunks/{project_id}/"))
    return {key.rsplit("/", 1)[1] for key in keys}


def give_state(live: LiveServer, source: str, run_id: str, target: str) -> dict[str, Any] | None:
    """What br-api does to make a branch: the target session's snapshot becomes the state at
    the end of `run_id` of the source session."""

    async def give() -> dict[str, Any] | None:
        async with live.state.session_factory() as db:
            session = await db.get(Session, uuid.UUID(source))
            at = await db.get(Run, uuid.UUID(run_id))
            record = await run_states.state_at(db, session, at)
            if record is not None:
                branch = await db.get(Session, uuid.UUID(target))
                branch.snapshot = record
            await db.commit()
            return record

    return live.call(give())


def file_of(record: dict[str, Any], variable: str) -> dict[str, Any]:
    """The variable's largest file (a frame's float columns are raw beside its Parquet)."""
    name = next(v["file"] for v in record["variables"] if v["name"] == variable)
    stem = name.rsplit(".", 1)[0]
    files = [f for f in record["files"] if f["name"].rsplit(".", 1)[0] == stem]
    return max(files, key=lambda f: f["size"])


def test_each_run_keeps_its_state_and_unchanged_data_is_stored_once(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    live = long_steps
    session = new_session(alice, "States")
    runs = [run(alice, llm, session["id"], BIG)]
    runs += [run(alice, llm, session["id"], f"n = {i}") for i in (2, 3)]
    kept = states(live, session["id"])
    assert set(kept) == set(runs)  # a state per run
    records = [kept[r].record for r in runs]
    big = [file_of(record, "big") for record in records]
    assert big[0]["size"] > 3 * snapshot_chunks.CHUNK_BYTES
    assert big[0]["chunks"] == big[1]["chunks"] == big[2]["chunks"]
    # Stored once: one object a distinct chunk, the later runs adding only their small files.
    named = set().union(*(snapshot_chunks.digests_of(record) for record in records))
    rows = chunk_rows(live, session["project_id"])
    assert set(rows) == named == chunk_objects(live, session["project_id"])
    assert sum(rows.values()) <= 1.1 * records[0]["bytes"]
    assert kept[runs[1]].new_bytes < 1000 and kept[runs[2]].new_bytes < 1000
    assert kept[runs[0]].new_bytes == records[0]["bytes"]
    # The space is shown: the project's snapshots, each chunk once.
    usage = alice.get(f"/projects/{session['project_id']}/usage").json()
    assert usage["snapshots_bytes"] == sum(rows.values())
    assert usage["snapshots"] == 3

    async def of_session() -> tuple[int, int]:
        async with live.state.session_factory() as db:
            return await quota_usage.of_session(db, uuid.UUID(session["id"]))

    assert live.call(of_session()) == (3, sum(rows.values()))


def test_an_older_state_restores_that_runs_values_in_a_new_session(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    live = long_steps
    session = new_session(alice, "Parent")
    first = run(
        alice,
        llm,
        session["id"],
        "import pandas as pd\ndf = pd.DataFrame({'v': [1, 2, 3]})\nd = {'a': 1}\ngone = 'here'",
    )
    run(alice, llm, session["id"], "df.loc[0, 'v'] = 99\nd['b'] = 2\ndel gone")
    response = alice.post(f"/projects/{session['project_id']}/sessions", json={"title": "B"})
    branch = response.json()
    assert give_state(live, session["id"], first, branch["id"]) is not None
    llm.script(code_reply("print(df['v'].tolist(), sorted(d), gone)"), final_reply("'as it was'"))
    events = ask(alice, branch["id"], "What was there?")
    assert of(events, "step.output")[0]["output"].strip() == "[1, 2, 3] ['a'] here"
    # The parent is untouched and keeps its own latest values.
    llm.script(code_reply("print(df['v'].tolist(), sorted(d))"), final_reply("'now'"))
    events = ask(alice, session["id"], "And now?")
    assert of(events, "step.output")[0]["output"].strip() == "[99, 2, 3] ['a', 'b']"


def test_retention_drops_the_oldest_never_the_latest(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    live = long_steps
    live.settings.SNAPSHOT_KEEP_PER_SESSION = 2
    try:
        session = new_session(alice, "Kept")
        runs = [run(alice, llm, session["id"], f"x = {i}") for i in range(3)]
    finally:
        live.settings.SNAPSHOT_KEEP_PER_SESSION = 50
    assert set(states(live, session["id"])) == set(runs[1:])
    other = alice.post(f"/projects/{session['project_id']}/sessions", json={"title": "B"}).json()
    assert give_state(live, session["id"], runs[0], other["id"]) is None  # dropped: replay
    # Over the project's bound: the oldest go, the session's latest stays.
    factory = live.state.session_factory
    project_id = uuid.UUID(session["project_id"])
    dropped = live.call(state_retention.drop_states(factory, project_id, 50, max_bytes=1))
    assert dropped == 1
    assert set(states(live, session["id"])) == {runs[2]}


def test_the_sweep_keeps_chunks_a_session_still_names(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    live = long_steps
    session = new_session(alice, "Shared")
    first = run(alice, llm, session["id"], "import pandas as pd\nshared = pd.DataFrame({'k': [7]})")
    other = alice.post(f"/projects/{session['project_id']}/sessions", json={"title": "B"}).json()
    record = give_state(live, session["id"], first, other["id"])
    assert record is not None
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204
    factory, storage = live.state.session_factory, live.state.storage
    project_id = uuid.UUID(session["project_id"])
    live.call(state_retention.sweep(factory, storage, project_id, grace_seconds=0))
    assert snapshot_chunks.digests_of(record) <= chunk_objects(live, session["project_id"])
    llm.script(code_reply("print(shared['k'].tolist())"), final_reply("'kept'"))
    events = ask(alice, other["id"], "Still there?")
    assert of(events, "step.output")[0]["output"].strip() == "[7]"
    # Once nothing names them, they go.
    assert alice.delete(f"/sessions/{other['id']}").status_code == 204
    live.call(state_retention.sweep(factory, storage, project_id, grace_seconds=0))
    assert chunk_objects(live, session["project_id"]) == set()
    assert chunk_rows(live, session["project_id"]) == {}


def test_a_sweep_racing_a_writer_never_loses_a_chunk_it_keeps(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    """Both orders of the two decisions: the writer names the chunk first (the sweep then
    leaves it), or the sweep deletes it first (the writer then finds it gone)."""
    live = long_steps
    session = new_session(alice, "Race")
    first = run(alice, llm, session["id"], "y = 41")
    factory, storage = live.state.session_factory, live.state.storage
    project_id = uuid.UUID(session["project_id"])
    record = states(live, session["id"])[first].record
    session_id = uuid.UUID(session["id"])
    # Unnamed and idle for an hour: a sweep would take them.
    live.call(_forget_and_age(live, session_id, project_id))
    # The writer first: keeping the record marks its chunks used; the sweep leaves them.
    assert live.call(run_states.keep(factory, uuid.UUID(first), session_id, project_id, record, 0))
    live.call(state_retention.sweep(factory, storage, project_id, grace_seconds=60))
    assert snapshot_chunks.digests_of(record) <= chunk_objects(live, session["project_id"])
    # The sweep first: the writer is told which chunks went, and stores them again.
    live.call(_forget_and_age(live, session_id, project_id))
    live.call(state_retention.sweep(factory, storage, project_id, grace_seconds=60))
    assert chunk_objects(live, session["project_id"]) == set()
    with pytest.raises(run_states.ChunksGone) as gone:
        live.call(run_states.keep(factory, uuid.UUID(first), session_id, project_id, record, 0))
    assert gone.value.digests == snapshot_chunks.digests_of(record)


async def _forget_and_age(live: LiveServer, session_id: uuid.UUID, project_id: uuid.UUID) -> None:
    from datetime import timedelta

    from sqlalchemy import delete, update

    from app.models.base import utcnow

    async with live.state.session_factory() as db:
        await db.execute(delete(RunState).where(RunState.session_id == session_id))
        await db.execute(update(Session).where(Session.id == session_id).values(snapshot=None))
        old = utcnow() - timedelta(hours=1)
        await db.execute(
            update(SnapshotChunk).where(SnapshotChunk.project_id == project_id).values(used_at=old)
        )
        await db.commit()


def test_a_missing_or_damaged_chunk_fails_the_load_clearly(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM, tmp_path: Path
) -> None:
    live = long_steps
    session = new_session(alice, "Damaged")
    first = run(alice, llm, session["id"], "z = list(range(100))")
    record = states(live, session["id"])[first].record
    storage = live.state.storage
    project_id = uuid.UUID(session["project_id"])
    digest = file_of(record, "z")["chunks"][0]
    key = snapshot_chunks.key(project_id, digest)

    async def load(into: str) -> None:
        marker = tmp_path / f"{into}.marker"
        workspace = tmp_path / into
        await snapshots.download(storage, workspace, marker, uuid.uuid4(), record, project_id)

    live.call(load("whole"))  # as stored, it loads
    assert (tmp_path / "whole").exists()

    async def spoil() -> None:
        async def bytes_() -> Any:
            yield b"not the chunk"

        await storage.put(key, bytes_(), "application/octet-stream")

    live.call(spoil())
    with pytest.raises(SnapshotDamaged, match="is damaged"):
        live.call(load("spoiled"))
    live.call(storage.delete(key))
    with pytest.raises(SnapshotDamaged, match="no longer stored"):
        live.call(load("missing"))
    # Nothing half-loaded is left to be taken for a snapshot.
    assert not list((tmp_path / "missing").rglob("manifest.json"))

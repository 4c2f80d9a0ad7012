"""The bounds of the states kept per question, off the run's end: a run's end drops only
its own session's old states; the periodic sweep does the project's bound, deletes the
chunks of deleted sessions and the orphan objects (stored, no row); and a save that the
project's bound cannot make room for is refused with a sentence naming what to delete."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

from sqlalchemy import event

from app.runs import snapshot_chunks
from app.runs.chunk_sweep import ChunkSweeper
from tests.api.test_query import ask, finished, of
from tests.api.test_queue import new_session
from tests.api.test_run_states import chunk_objects, chunk_rows, run, states
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

ORPHAN = "ab" * 32


async def _one(data: bytes) -> AsyncIterator[bytes]:
    yield data


def sweep(live: LiveServer) -> None:
    """One pass of the periodic sweep over every project, with no grace."""
    sweeper: ChunkSweeper = live.state.chunk_sweeper
    live.call(sweeper.sweep_pass(grace_seconds=0, limit=100_000))


def test_a_run_end_drops_only_its_sessions_states_and_the_sweep_does_the_rest(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    live = long_steps
    first = new_session(alice, "First")
    project_id = first["project_id"]
    older = [run(alice, llm, first["id"], f"x = {i}") for i in range(2)]
    gone = alice.post(f"/projects/{project_id}/sessions", json={"title": "Gone"}).json()
    run(alice, llm, gone["id"], "only_here = 'a value no other session has'")
    only_gone = set(chunk_rows(live, project_id)) - set().union(
        *(snapshot_chunks.digests_of(s.record) for s in states(live, first["id"]).values())
    )
    assert only_gone
    assert alice.delete(f"/sessions/{gone['id']}").status_code == 204
    # An object stored with no row (a crash between the upload and the row).
    orphan_key = snapshot_chunks.key(uuid.UUID(project_id), ORPHAN)
    live.call(live.state.storage.put(orphan_key, _one(b"orphan"), "application/octet-stream"))

    live.settings.SNAPSHOT_KEEP_PER_SESSION = 1
    try:
        other = alice.post(f"/projects/{project_id}/sessions", json={"title": "Other"}).json()
        run(alice, llm, other["id"], "y = 1")
        # That run's end left the other sessions as they were: First's two states, and the
        # deleted session's chunks.
        assert set(states(live, first["id"])) == set(older)
        assert only_gone <= set(chunk_rows(live, project_id))
        assert only_gone <= chunk_objects(live, project_id)
        assert ORPHAN in chunk_objects(live, project_id)

        sweep(live)  # the sweep drops First's older state and the deleted session's chunks
        assert set(states(live, first["id"])) == {older[1]}
        assert not only_gone & set(chunk_rows(live, project_id))
        assert not only_gone & chunk_objects(live, project_id)
        assert ORPHAN in chunk_objects(live, project_id)  # seen once without a row: kept
        sweep(live)  # seen again: gone
    finally:
        live.settings.SNAPSHOT_KEEP_PER_SESSION = 50
    objects = chunk_objects(live, project_id)
    assert ORPHAN not in objects
    assert objects == set(chunk_rows(live, project_id))  # every named chunk stays
    llm.script(code_reply("print(x)"), final_reply("'kept'"))
    events = ask(alice, first["id"], "Still there?")
    assert of(events, "step.output")[0]["output"].strip() == "1"


BIGGER = "import numpy as np\nbigger = np.random.default_rng(1).random(90_000)"
SMALLER = "import numpy as np\nsmaller = np.random.default_rng(2).random(60_000)"
ANOTHER = "another = np.random.default_rng(3).random(60_000)"


@contextmanager
def statements(live: LiveServer) -> Iterator[list[str]]:
    """The SQL statements the app runs meanwhile."""
    seen: list[str] = []

    def listener(*args: object) -> None:
        seen.append(str(args[2]))

    engine = live.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", listener)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", listener)


def test_over_the_project_bound_the_save_is_refused_naming_what_to_delete(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    live = long_steps
    live.settings.SNAPSHOT_PROJECT_MAX_MB = 1
    try:
        bigger = new_session(alice, "Bigger")
        project_id = bigger["project_id"]
        run(alice, llm, bigger["id"], BIGGER)  # 0.7 MB: within the bound
        assert len(states(live, bigger["id"])) == 1
        smaller = alice.post(f"/projects/{project_id}/sessions", json={"title": "Smaller"}).json()
        llm.script(code_reply(SMALLER), final_reply("'done'"))
        events = ask(alice, smaller["id"], "Make the smaller one")
        assert finished(events)["status"] == "succeeded"
        [refused] = of(events, "state.not_saved")
        reason = refused["reason"]
        assert "were not saved" in reason and "SNAPSHOT_PROJECT_MAX_MB" in reason
        assert "1.0 MB bound" in reason
        assert reason.index("“Bigger” (") < reason.index("“Smaller” (")
        names = [e.event for e in events]
        assert names.index("state.not_saved") < names.index("run.finished")
        assert states(live, smaller["id"]) == {}  # nothing kept for it
        usage = alice.get(f"/projects/{project_id}/usage").json()
        assert usage["snapshots_refused"] == reason
        assert alice.get("/auth/me/usage").json()["snapshots_refused"] is None

        # Still over the bound, nothing changed that could make room: the next save is
        # refused again without reading the project's saved states (a run end stays cheap).
        with statements(live) as seen:
            llm.script(code_reply(ANOTHER), final_reply("'done'"))
            events = ask(alice, smaller["id"], "Make another one")
        assert finished(events)["status"] == "succeeded"
        [again] = of(events, "state.not_saved")
        assert "would take at least" in again["reason"] and "1.0 MB bound" in again["reason"]
        # Smaller would now hold both arrays: the largest, named first.
        assert again["reason"].index("“Smaller” (") < again["reason"].index("“Bigger” (")
        assert not [q for q in seen if "run_states.record" in q], seen
        assert states(live, smaller["id"]) == {}

        # The user deletes the largest session: the next save is kept, the refusal cleared.
        assert alice.delete(f"/sessions/{bigger['id']}").status_code == 204
        run(alice, llm, smaller["id"], "n = len(smaller)")
        assert len(states(live, smaller["id"])) == 1
        usage = alice.get(f"/projects/{project_id}/usage").json()
        assert usage["snapshots_refused"] is None
    finally:
        live.settings.SNAPSHOT_PROJECT_MAX_MB = 10240

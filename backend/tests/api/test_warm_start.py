"""A session's first question starts at once when a spare worker is ready.

Through the query API on both stacks, with one spare kept (the product's default): the
first question of a new session goes straight to its first step (no `sandbox.starting`),
reads the session's own file and answers; the next session's question finds the spare
that was started after it; a session whose variables were saved gets them back through a
spare, and the user is told the sandbox is starting while they are restored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator

import pytest

from app.runs.sandboxes import SPARE_PREFIX, SandboxPool
from tests.api.test_query import READ, ask, finished, names, of
from tests.api.test_snapshots import SALES, sales_session
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.workspaces import project_file


@pytest.fixture
def one_spare(live: LiveServer) -> Iterator[LiveServer]:
    pool = live.state.sandboxes
    live.call(pool.keep_spares(1))
    try:
        yield live
    finally:
        live.call(pool.keep_spares(0))


def spare_ready(live: LiveServer) -> None:
    deadline = time.monotonic() + 120
    while live.state.sandboxes.spares < 1:
        assert time.monotonic() < deadline, "no spare worker became ready"
        time.sleep(0.05)


def test_a_first_question_starts_at_once_on_a_spare(
    one_spare: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    for api, title in ((alice, "Alice's sales"), (bob, "Bob's sales")):
        spare_ready(one_spare)
        session = sales_session(api, title)
        llm.script(
            code_reply(f"{READ}\nprint(df['revenue'].sum())"), final_reply("'4490.75 in total'")
        )
        events = ask(api, session["id"], "Total revenue?")
        assert names(events)[:2] == ["run.started", "step.started"]  # no sandbox.starting
        assert finished(events)["status"] == "succeeded"
        assert of(events, "step.output")[0]["output"].strip() == "4490.75"
        assert project_file(one_spare.settings.DATA_DIR, session["id"], "sales data.csv") == SALES
    workspaces = one_spare.settings.DATA_DIR / "workspaces"
    # The two sessions' workers and a new spare; the spares' old folders are gone.
    spare_ready(one_spare)
    pool = one_spare.state.sandboxes
    assert pool.live == 2
    assert len(list(workspaces.glob(f"{SPARE_PREFIX}*"))) == 1


def test_saved_variables_come_back_through_a_spare_and_the_user_is_told(
    one_spare: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    session = sales_session(alice, "Sales")
    llm.script(code_reply(f"{READ}\ntotal = df['revenue'].sum()"), final_reply("'kept'"))
    assert finished(ask(alice, session["id"], "Keep the total"))["status"] == "succeeded"
    pool = one_spare.state.sandboxes
    one_spare.call(_evict_idle(pool))  # the session's worker goes, as after an idle time
    assert pool.live == 0
    spare_ready(one_spare)

    llm.script(code_reply("print(total * 2)"), final_reply("'doubled'"))
    events = ask(alice, session["id"], "Double it")
    assert names(events)[:2] == ["run.started", "sandbox.starting"]
    assert of(events, "sandbox.starting")[0]["restoring"] is True
    assert finished(events)["status"] == "succeeded"
    assert of(events, "step.output")[0]["output"].strip() == "8981.5"
    spare_ready(one_spare)  # and the pool keeps a spare for the next session


async def _evict_idle(pool: SandboxPool) -> None:
    limits = pool.limits
    pool.limits = dataclasses.replace(limits, idle_seconds=0.001)
    try:
        await asyncio.sleep(0.01)
        await pool.reap()
    finally:
        pool.limits = limits

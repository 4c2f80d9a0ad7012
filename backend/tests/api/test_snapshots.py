"""A session's variables outlive its sandbox: evicted, restarted, or run on another machine.

End to end on both stacks: the first question leaves variables behind; the session's
worker then goes (evicted for another session's run, or gone with the machine's workspace
as when another replica takes the session); the next question's code uses them again, and
the model was told what was restored and what was lost.
"""

from __future__ import annotations

import shutil
import uuid
from typing import Any

from app.models import Session
from app.runs import state_retention
from app.runs.workspace import snapshot_marker_path, workspace_dir
from tests.api.test_query import READ, ask, finished, of
from tests.api.test_queue import new_session, one_worker  # noqa: F401 (a fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

FIRST = f"""{READ}
totals = df.groupby('region')['revenue'].sum()
from sklearn.linear_model import LinearRegression
model = LinearRegression().fit([[0], [1]], [0, 1])
def share(part):
    return round(part / totals.sum(), 3)
print(totals)
"""
SALES = (
    b"region,month,revenue\nNorth,2026-01,1200.5\nSouth,2026-01,980\n"
    b"North,2026-02,1310.25\nSouth,2026-02,1000\n"
)


def sales_session(api: Api, title: str) -> dict[str, Any]:
    session = new_session(api, title)
    assert api.upload(session["project_id"], "sales data.csv", SALES).status_code == 201
    return session


def snapshot_keys(live: LiveServer, project_id: str) -> list[str]:
    """The project's stored snapshot chunks (app.runs.snapshot_chunks)."""
    return list(live.call(live.state.storage.list_keys(f"snapshot-chunks/{project_id}/")))


def generation(live: LiveServer, session_id: str) -> str:
    async def read() -> str:
        async with live.state.session_factory() as db:
            session = await db.get(Session, uuid.UUID(session_id))
            return str(session.snapshot["generation"])

    return live.call(read())


def first_question(alice: Api, session: dict[str, Any], llm: ScriptedLLM) -> None:
    llm.script(code_reply(FIRST), final_reply("'North leads.'"))
    assert finished(ask(alice, session["id"], "Revenue by region?"))["status"] == "succeeded"


def system_prompt(llm: ScriptedLLM) -> str:
    return str(llm.requests[-2]["messages"][0]["content"])


def test_variables_survive_an_eviction_and_the_model_is_told(
    one_worker: LiveServer,  # noqa: F811
    alice: Api,
    bob: Api,
    llm: ScriptedLLM,
) -> None:
    session = sales_session(alice, "Sales")
    first_question(alice, session, llm)
    keys = snapshot_keys(one_worker, session["project_id"])
    # The manifest, and df and totals: each a Parquet file and its float columns raw.
    assert len(keys) == 5
    assert not live_keys(one_worker, f"sessions/{session['id']}/snapshots/")

    # Bob's question needs the only worker: Alice's is evicted.
    other = new_session(bob, "Other")
    llm.script(code_reply("x = 1"), final_reply("'done'"))
    assert finished(ask(bob, other["id"], "Anything"))["status"] == "succeeded"
    assert one_worker.state.sandboxes.live == 1

    llm.script(code_reply("print(totals['North'], df.shape)\nprint(model)"), final_reply("'55.9%'"))
    events = ask(alice, session["id"], "What share is North's?")
    assert finished(events)["status"] == "succeeded"
    step = of(events, "step.output")[0]["output"]
    assert "2510.75 (4, 3)" in step
    assert of(events, "step.error")[0]["error"].startswith(
        "Code execution failed at line 'print(model)' due to: NameError"
    )
    prompt = system_prompt(llm)
    assert (
        "Variables from earlier questions, defined now (use them rather than loading the data "
        "again): df (DataFrame, 4 rows, 3 columns), totals (Series, 2 values)." in prompt
    )
    assert (
        "these variables could not be kept; compute them again if you need them: "
        "model (LinearRegression), share (a function defined in the code)." in prompt
    )


def test_a_session_continues_where_its_workspace_is_gone(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    # long_steps: the first question imports scikit-learn, which can take longer than the
    # tests' 4 s step limit on a busy machine; what is tested here is not that limit.
    live = long_steps
    """Another replica has neither the worker nor the workspace: the snapshot comes from
    object storage."""
    session = sales_session(alice, "Sales")
    first_question(alice, session, llm)
    before = generation(live, session["id"])
    live.call(live.state.sandboxes.stop_all())
    session_id = uuid.UUID(session["id"])
    shutil.rmtree(workspace_dir(live.settings.DATA_DIR, session_id))
    snapshot_marker_path(live.settings.DATA_DIR, session_id).unlink()

    llm.script(
        code_reply("share = round(totals['North'] / totals.sum(), 3)\nprint(share)"),
        final_reply("'55.9%'"),
    )
    events = ask(alice, session["id"], "What share is North's?")
    said = [(e.event, e.data) for e in events if e.event.startswith(("step", "sandbox", "run"))]
    assert of(events, "step.output"), said  # what the step said instead, if it failed
    assert of(events, "step.output")[0]["output"].strip() == "0.559"
    assert "df (DataFrame, 4 rows, 3 columns), totals (Series, 2 values)" in system_prompt(llm)
    assert generation(live, session["id"]) != before  # a new snapshot


def test_a_warm_worker_keeps_everything_and_says_so(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    # long_steps: the first question imports scikit-learn, which can take longer than the
    # tests' 4 s step limit on a busy machine; what is tested here is not that limit.
    session = sales_session(alice, "Sales")
    first_question(alice, session, llm)
    llm.script(code_reply("print(share(totals['North']))"), final_reply("'55.9%'"))
    events = ask(alice, session["id"], "What share is North's?")
    said = [(e.event, e.data) for e in events if e.event.startswith(("step", "sandbox", "run"))]
    assert of(events, "step.output"), said
    assert of(events, "step.output")[0]["output"].strip() == "0.559"
    prompt = system_prompt(llm)
    assert "model (LinearRegression), share (a function defined in the code)" in prompt
    assert "restarted" not in prompt


def test_deleting_a_session_deletes_its_snapshots(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    session = sales_session(alice, "Sales")
    first_question(alice, session, llm)
    assert snapshot_keys(live, session["project_id"])
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204
    # Its chunks go with the project's next sweep (nothing names them any more).
    project_id = uuid.UUID(session["project_id"])
    factory, storage = live.state.session_factory, live.state.storage
    live.call(state_retention.sweep(factory, storage, project_id, grace_seconds=0))
    assert snapshot_keys(live, session["project_id"]) == []


def live_keys(live: LiveServer, prefix: str) -> list[str]:
    return list(live.call(live.state.storage.list_keys(prefix)))

"""A branch's files are the versions its past read (issue 43): pinned when it is made, read
by its later questions while the parent reads the latest, shown in the session, and moved
to the latest on request; a pinned version no longer kept is said."""

from __future__ import annotations

from typing import Any

from tests.api.branching import answered, branch, new_session
from tests.api.test_query import of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

READ = "import pandas as pd\nprint('sum', int(pd.read_csv('orders.csv')['x'].sum()))"


def _upload(api: Api, project_id: str, rows: str) -> None:
    response = api.upload(project_id, "orders.csv", f"x\n{rows}\n".encode())
    assert response.status_code == 201, response.text


def _sum(api: Api, session_id: str, llm: ScriptedLLM) -> str:
    events = answered(api, session_id, llm, READ, "summed")
    return "".join(o["output"] for o in of(events, "step.output")).strip()


def _pins(api: Api, session_id: str) -> list[dict[str, Any]]:
    response = api.get(f"/sessions/{session_id}")
    assert response.status_code == 200, response.text
    return list(response.json()["file_pins"])


def test_a_branch_reads_the_versions_its_past_read_until_moved_to_the_latest(
    live: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    session = new_session(alice, "Orders")
    project_id = session["project_id"]
    _upload(alice, project_id, "1\n2")  # version 1: 3
    _upload(alice, project_id, "5\n5")  # version 2: 10
    assert _sum(alice, session["id"], llm) == "sum 10"  # Q1 reads version 2
    _upload(alice, project_id, "100\n200")  # version 3: 300
    q1 = alice.get(f"/sessions/{session['id']}/runs").json()["items"][0]

    made = branch(alice, session["id"], q1["id"])
    [pin] = made["file_pins"]
    assert pin["name"] == "orders.csv" and (pin["version"], pin["latest_version"]) == (2, 3)
    assert pin["kept"] is True
    assert pin["note"] == "Reads orders.csv as version 2 (latest is 3)."
    assert _pins(alice, made["id"]) == [pin]
    assert _pins(alice, session["id"]) == []  # the parent reads the latest

    assert _sum(alice, made["id"], llm) == "sum 10"  # the branch computes on version 2
    assert _sum(alice, session["id"], llm) == "sum 300"  # the parent on version 3
    last = alice.get(f"/sessions/{made['id']}/runs").json()["items"][-1]
    read = alice.get(f"/runs/{last['id']}").json()["files"]
    assert [(f["name"], f["version"], f["read"]) for f in read] == [("orders.csv", 2, True)]

    # A branch of the branch after its own question keeps version 2.
    own = alice.get(f"/sessions/{made['id']}/runs").json()["items"][-1]
    deeper = branch(alice, made["id"], own["id"])
    assert [(p["version"], p["latest_version"]) for p in deeper["file_pins"]] == [(2, 3)]

    # A viewer cannot move it; an editor can: the next question reads the latest.
    member = alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert member.status_code == 201, member.text
    assert bob.post(f"/sessions/{made['id']}/files/unpin").status_code == 403
    moved = alice.post(f"/sessions/{made['id']}/files/unpin")
    assert moved.status_code == 200, moved.text
    assert moved.json()["file_pins"] == [] and _pins(alice, made["id"]) == []
    assert _sum(alice, made["id"], llm) == "sum 300"
    assert _pins(alice, deeper["id"])[0]["version"] == 2  # its own branch is untouched


def test_a_pinned_version_no_longer_kept_is_said_and_the_latest_is_read(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    kept = live.settings.FILE_VERSIONS_KEPT
    try:
        session = new_session(alice, "Pruned")
        project_id = session["project_id"]
        _upload(alice, project_id, "1\n2")  # version 1: 3
        assert _sum(alice, session["id"], llm) == "sum 3"
        q1 = alice.get(f"/sessions/{session['id']}/runs").json()["items"][0]
        made = branch(alice, session["id"], q1["id"])
        live.settings.FILE_VERSIONS_KEPT = 1
        _upload(alice, project_id, "7\n7")  # version 2: 14; version 1 is deleted
        [pin] = _pins(alice, made["id"])
        assert (pin["version"], pin["latest_version"], pin["kept"]) == (1, 2, False)
        assert pin["note"] == (
            "orders.csv version 1, which this branch's past read, is no longer kept: "
            "the branch reads version 2."
        )
        assert _sum(alice, made["id"], llm) == "sum 14"
    finally:
        live.settings.FILE_VERSIONS_KEPT = kept

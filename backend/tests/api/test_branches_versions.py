"""A branch rebuilt by replay reads the project files as its past read them: the versions
those runs read, not today's; a version no longer kept is said, and the branch's new
question reads them too (until moved to the latest)."""

from __future__ import annotations

from tests.api.branching import answered, branch, new_session
from tests.api.test_query import of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

READ = "import pandas as pd\ntotal = int(pd.read_csv('sales.csv')['x'].sum())"
SHOW = "print('total', total, 'today', int(pd.read_csv('sales.csv')['x'].sum()))"
SAME = (
    "The replay read the file versions the original questions read; the branch's new "
    "questions read the versions its last question read, until it is moved to the latest."
)


def test_a_replayed_branch_reads_the_versions_its_past_read(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    # One state kept per session: the state after Q1 is gone, so a branch after Q1 replays.
    live.settings.SNAPSHOT_KEEP_PER_SESSION = 1
    kept_versions = live.settings.FILE_VERSIONS_KEPT
    try:
        _replays_read_old_versions(live, alice, llm)
    finally:
        live.settings.SNAPSHOT_KEEP_PER_SESSION = 50
        live.settings.FILE_VERSIONS_KEPT = kept_versions


def _upload(alice: Api, project_id: str, rows: str) -> None:
    response = alice.upload(project_id, "sales.csv", f"x\n{rows}\n".encode())
    assert response.status_code == 201, response.text


def _replays_read_old_versions(live: LiveServer, alice: Api, llm: ScriptedLLM) -> None:
    session = new_session(alice)
    project_id = session["project_id"]
    _upload(alice, project_id, "1\n2")  # version 1: 3
    answered(alice, session["id"], llm, READ, "A1")
    answered(alice, session["id"], llm, "other = 1", "A2")
    _upload(alice, project_id, "10\n20")  # version 2: 30
    q1 = alice.get(f"/sessions/{session['id']}/runs").json()["items"][0]

    after = branch(alice, session["id"], q1["id"])
    assert [(p["version"], p["latest_version"]) for p in after["file_pins"]] == [(1, 2)]
    events = answered(alice, after["id"], llm, SHOW, "shown")
    printed = "".join(o["output"] for o in of(events, "step.output"))
    # Q1's version replayed, and read by the branch's question too (pinned: app.branches.pins).
    assert "total 3 today 3" in printed, printed
    [said] = of(events, "state.restored")
    assert said["source"] == "replay"
    assert said["notes"][0] == "Replayed 2 steps of 1 question."
    assert SAME not in said["notes"]  # every past question read what the branch reads
    assert not any("was deleted" in note for note in said["notes"])

    # Q3 reads version 2, Q4 drops its state: a branch after Q3 replays Q1 on version 1 and
    # Q3 on version 2, and reads version 2 (the last its past read).
    answered(alice, session["id"], llm, "late = int(pd.read_csv('sales.csv')['x'].sum())", "A3")
    answered(alice, session["id"], llm, "other = 2", "A4")
    q3 = alice.get(f"/sessions/{session['id']}/runs").json()["items"][2]
    later = branch(alice, session["id"], q3["id"])
    events = answered(alice, later["id"], llm, SHOW + "\nprint('late', late)", "shown")
    printed = "".join(o["output"] for o in of(events, "step.output"))
    assert "total 3 today 30" in printed and "late 30" in printed, printed
    [said] = of(events, "state.restored")
    assert said["source"] == "replay" and SAME in said["notes"]

    # Version 1 is pruned (one version kept): the replay reads today's and says so.
    live.settings.FILE_VERSIONS_KEPT = 1
    _upload(alice, project_id, "100\n200")  # version 3: 300
    again = branch(alice, session["id"], q1["id"])
    events = answered(alice, again["id"], llm, SHOW, "shown")
    printed = "".join(o["output"] for o in of(events, "step.output"))
    assert "total 300 today 300" in printed, printed
    [said] = of(events, "state.restored")
    assert "sales.csv version 1 was deleted; the replay read version 3." in said["notes"]
    assert SAME not in said["notes"]
    shown = alice.get(f"/sessions/{again['id']}").json()["restored"]
    assert shown == {"from": "replay", "notes": said["notes"]}

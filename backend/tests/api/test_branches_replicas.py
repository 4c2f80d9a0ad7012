"""A branch made through one replica answers through another (Postgres, Redis and S3
shared; each replica with its own disk): from the states kept at each run's end, as
content-addressed chunks in S3."""

from __future__ import annotations

from tests.api.test_replicas import ask, client, login, replicas  # noqa: F401 (a fixture)
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.replicas import BackendProcess


def test_a_branch_made_on_one_replica_answers_on_another(
    replicas: list[BackendProcess],  # noqa: F811
    llm: ScriptedLLM,
) -> None:
    token = login(replicas[0])
    a, b = client(replicas[0], token), client(replicas[1], token)
    project = a.post("/projects", json={"name": "Branches across replicas"}).json()
    session = a.post(f"/projects/{project['id']}/sessions", json={"title": "Counts"}).json()
    for value in (1, 2):
        llm.script(code_reply(f"x = {value}\nhistory = [{value}]"), final_reply(f"'set {value}'"))
        assert ask(a, session["id"], f"Set {value}")[-1].data["status"] == "succeeded"
    runs = a.get(f"/sessions/{session['id']}/runs").json()["items"]

    for run, expected, source in ((runs[1], 2, "snapshot"), (runs[0], 1, "snapshot")):
        made = a.post(f"/sessions/{session['id']}/branch", json={"after_run_id": run["id"]})
        assert made.status_code == 201, made.text
        branch_id = made.json()["id"]
        assert b.get(f"/sessions/{branch_id}").json()["parent_session_id"] == session["id"]
        llm.script(code_reply("print('x is', x, history)"), final_reply("'shown'"))
        events = ask(b, branch_id, "Show x")
        assert events[-1].data["status"] == "succeeded", events
        printed = "".join(e.data["output"] for e in events if e.event == "step.output")
        assert f"x is {expected} [{expected}]" in printed
        [restored] = [e.data for e in events if e.event == "state.restored"]
        assert restored["source"] == source
    a.close()
    b.close()

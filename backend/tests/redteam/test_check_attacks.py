"""Attacks on a project's checks (issue 41): another project's checks, check runs and runs
are not there for an outsider (404, whatever they try), and a viewer reads the checks but
cannot change them or spend the project's budget running them (403). Through the real API
on both stacks."""

from __future__ import annotations

from typing import Any

from tests.api.test_checks import add_check, finished, start
from tests.api.test_query import ask
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply
from tests.support.server import LiveServer


def alices_checks(alice: Api, llm: ScriptedLLM) -> dict[str, Any]:
    """Alice's project with a secret answer in a run, a check and a finished check run."""
    project = alice.project("Secret")
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    llm.script(final_reply("'@secret[hunter2]'"), final_reply("'@secret[hunter2]'"))
    run_id = ask(alice, session["id"], "The password?")[0].data["run_id"]
    check = add_check(alice, project["id"], from_run_id=run_id)
    check_run = finished(alice, start(alice, project["id"])["id"])
    assert check_run["passed"] == 1
    return {"project": project, "run_id": run_id, "check": check, "check_run": check_run}


def test_another_projects_checks_check_runs_and_runs_are_not_found(
    live: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    theirs = alices_checks(alice, llm)
    check_id, check_run_id = theirs["check"]["id"], theirs["check_run"]["id"]
    project_id = theirs["project"]["id"]
    attempts = [
        bob.get(f"/check-runs/{check_run_id}"),
        bob.patch(f"/checks/{check_id}", json={"expected": {"secret": "x"}}),
        bob.delete(f"/checks/{check_id}"),
        bob.get(f"/projects/{project_id}/checks"),
        bob.get(f"/projects/{project_id}/check-runs"),
        bob.post(f"/projects/{project_id}/check-runs", json={}),
        bob.post(f"/projects/{project_id}/checks", json={"question": "Q", "expected": "x"}),
    ]
    for response in attempts:
        assert response.status_code == 404, response.request.url
        assert "hunter2" not in response.text
    # A check of bob's own project made from alice's run would copy her answer out.
    mine = bob.project("Mine")
    stolen = bob.post(f"/projects/{mine['id']}/checks", json={"from_run_id": theirs["run_id"]})
    assert (stolen.status_code, stolen.json()["code"]) == (404, "run_not_found")
    assert "hunter2" not in stolen.text and "password" not in stolen.text
    # Nothing changed on alice's side.
    kept = alice.get(f"/projects/{project_id}/checks").json()["items"]
    assert [c["expected"] for c in kept] == [{"secret": "hunter2"}]


def test_a_viewer_reads_the_checks_but_cannot_change_or_run_them(
    live: LiveServer, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    theirs = alices_checks(alice, llm)
    project_id, check_id = theirs["project"]["id"], theirs["check"]["id"]
    added = alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert added.status_code == 201, added.text
    assert bob.get(f"/projects/{project_id}/checks").json()["total"] == 1
    assert bob.get(f"/check-runs/{theirs['check_run']['id']}").json()["passed"] == 1
    refused = [
        bob.post(f"/projects/{project_id}/check-runs", json={}),
        bob.post(f"/projects/{project_id}/checks", json={"question": "Q", "expected": "x"}),
        bob.patch(f"/checks/{check_id}", json={"question": "Changed"}),
        bob.delete(f"/checks/{check_id}"),
    ]
    for response in refused:
        assert response.status_code == 403, response.request.url
        assert response.json()["code"] == "forbidden_role"
    history = alice.get(f"/projects/{project_id}/check-runs").json()
    assert history["total"] == 1  # the viewer started none
    assert alice.get(f"/projects/{project_id}/checks").json()["items"][0]["question"] == (
        "The password?"
    )

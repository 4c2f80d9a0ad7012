"""Every route of a project's resources, tried as its owner, an editor, a viewer and a user
who is not a member (issue 26), on both stacks.

The routes come from the OpenAPI document, so a new route cannot be forgotten: one that
names a project's resource and is missing from the expectations fails the test. Each is
called with real ids and an empty body; what counts is whether the request got past the
access check: 404 (hidden: a stranger sees no id of the project), 403 `forbidden_role`
(refused: the role is short), or anything else (allowed; a 422 for the empty body too).
A route that deletes is tried on a world of its own for each role that may delete.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass

import httpx
import pytest

from tests.api.conftest import SALES
from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.source_databases import ServerSource

ROLES = ("stranger", "viewer", "editor", "owner")
RANK = {"viewer": 1, "editor": 2, "owner": 3}
# What a route needs beyond the rule (GET and HEAD: any member; anything else: an editor).
OWNER_ONLY = {
    "DELETE /projects/{project_id}",
    "POST /projects/{project_id}/members",
    "PATCH /projects/{project_id}/members/{user_id}",
    "DELETE /projects/{project_id}/members/{user_id}",
    "POST /projects/{project_id}/sources",
    "DELETE /sources/{source_id}",
    "GET /projects/{project_id}/audit",
    "GET /projects/{project_id}/audit/verify",
    "POST /shares/{share_id}/reissue",
    # Its author may too: the owner wrote the one tried here.
    "DELETE /comments/{comment_id}",
}
# What any member may do whatever the method (a viewer comments).
ANY_MEMBER = {"POST /runs/{run_id}/comments"}
# What only editors and owners may read (a job's share link opens its runs to anyone).
EDITOR_READS = {"GET /jobs/{job_id}/share"}
# Ids that belong to a project: a route that names one is a project's route.
PROJECT_IDS = re.compile(
    r"\{(project_id|file_id|session_id|run_id|artifact_id|source_id|share_id|item_id|check_id"
    r"|check_run_id|comment_id|job_id|job_run_id)\}"
)
# The routes this test knows; the document must list exactly these (a new one is added here).
KNOWN = 83
# Routes whose last id is made up here (no such thing exists in the world below): past the
# role's gate, they answer 404 with this code, which counts as allowed.
MADE_UP = {"POST /jobs/{job_id}/repairs/{repair_id}/approval": "repair_not_found"}


def needed(route: str) -> str:
    if route in OWNER_ONLY:
        return "owner"
    if route in ANY_MEMBER:
        return "viewer"
    if route in EDITOR_READS:
        return "editor"
    return "viewer" if route.split()[0] in ("GET", "HEAD") else "editor"


def expected(route: str, role: str) -> str:
    if role == "stranger":
        return "hidden"
    return "allowed" if RANK[role] >= RANK[needed(route)] else "refused"


def outcome(response: httpx.Response) -> str:
    if response.status_code == 404:
        return "hidden"
    if response.status_code == 403:
        assert response.json()["code"] == "forbidden_role", response.text
        return "refused"
    assert response.status_code < 500, response.text
    return "allowed"


def project_routes(live: LiveServer) -> list[str]:
    paths = httpx.get(f"{live.url}/api/v1/openapi.json").json()["paths"]
    return sorted(
        f"{method.upper()} {path.removeprefix('/api/v1')}"
        for path, operations in paths.items()
        if PROJECT_IDS.search(path)
        for method in operations
    )


@dataclass
class Team:
    members: dict[str, Api]  # by role; the stranger is no member
    ids: dict[str, str]  # user ids by role, and a spare viewer's ("target")


def world(owner: Api, team: Team, mysql: ServerSource, run: bool) -> dict[str, str]:
    """A project of the owner's with a file, a session (with a finished run and its
    artifact when `run`), a source, and the team's members in their roles."""
    project = owner.project("Team")
    ids = {"project_id": project["id"]}
    for role in ("editor", "viewer"):
        added = owner.post(
            f"/projects/{project['id']}/members",
            json={"email": f"{role}@example.com", "role": role},
        )
        assert added.status_code == 201, added.text
    added = owner.post(
        f"/projects/{project['id']}/members", json={"email": "spare@example.com", "role": "viewer"}
    )
    assert added.status_code == 201, added.text
    ids["user_id"] = team.ids["target"]
    uploaded = owner.upload(project["id"], "sales.csv", SALES)
    assert uploaded.status_code == 201, uploaded.text
    ids["file_id"], ids["version"] = uploaded.json()["id"], "1"
    session = owner.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    ids["session_id"] = session["id"]
    source = owner.post(
        f"/projects/{project['id']}/sources", json={"name": "shop", "url": mysql.url()}
    )
    assert source.status_code == 201, source.text
    ids["source_id"] = source.json()["id"]
    item = owner.post(
        f"/projects/{project['id']}/knowledge",
        json={"kind": "rule", "title": "Fiscal year", "body": "It starts in April."},
    )
    assert item.status_code == 201, item.text
    ids["item_id"] = item.json()["id"]
    check = owner.post(
        f"/projects/{project['id']}/checks", json={"question": "Q", "expected": {"x": 1}}
    )
    assert check.status_code == 201, check.text
    ids["check_id"] = check.json()["id"]
    if run:
        events = ask(owner, session["id"], "A table, please.")
        assert finished(events)["status"] == "succeeded"
        ids["run_id"] = events[0].data["run_id"]
        artifacts = owner.get(f"/sessions/{session['id']}/artifacts").json()
        ids["artifact_id"] = artifacts["items"][0]["id"]
        comment = owner.post(f"/runs/{ids['run_id']}/comments", json={"body": "Nice."})
        assert comment.status_code == 201, comment.text
        ids["comment_id"] = comment.json()["id"]
        # Revoking it again is no error: every role that may revoke revokes this one.
        share = owner.post(f"/sessions/{session['id']}/shares", json={})
        assert share.status_code == 201, share.text
        ids["share_id"] = share.json()["id"]
        # A check run that has finished (the script's next reply answers its check).
        check_run = owner.post(f"/projects/{project['id']}/check-runs", json={})
        assert check_run.status_code == 202, check_run.text
        ids["check_run_id"] = check_run.json()["id"]
        until_finished(owner, ids["check_run_id"])
    else:  # a run to make a job of, with no model: a cell
        with owner.stream(
            "POST", f"/sessions/{session['id']}/cells", json={"language": "python", "code": "x = 1"}
        ) as response:
            assert response.status_code == 200
            response.read()
    job = owner.post(
        f"/projects/{project['id']}/jobs", json={"session_id": session["id"], "name": "J"}
    )
    assert job.status_code == 201, job.text
    ids["job_id"] = job.json()["id"]
    ids["repair_id"] = str(uuid.uuid4())  # MADE_UP: no repair of this job exists
    if run:  # a job run that has ended (the model wrote no checks: the script is used up)
        deadline = time.monotonic() + 120
        while owner.get(f"/jobs/{ids['job_id']}").json()["checks"]["status"] == "writing":
            assert time.monotonic() < deadline, "the job's checks were not written"
            time.sleep(0.1)
        job_run = owner.post(f"/jobs/{ids['job_id']}/runs", json={})
        assert job_run.status_code == 202, job_run.text
        ids["job_run_id"] = job_run.json()["id"]
        while owner.get(f"/job-runs/{ids['job_run_id']}").json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, "the job run did not end"
            time.sleep(0.1)
    return ids


def until_finished(api: Api, check_run_id: str) -> None:
    deadline = time.monotonic() + 120
    while api.get(f"/check-runs/{check_run_id}").json()["status"] == "running":
        assert time.monotonic() < deadline, "the check run did not finish"
        time.sleep(0.1)


def call(api: Api, route: str, ids: dict[str, str]) -> httpx.Response:
    method, path = route.split(" ", 1)
    url = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], path)
    if method in ("POST", "PATCH", "PUT"):
        return api.request(method, url, json={})
    if path.endswith("/live"):  # a session's live stream never ends by itself
        with api.stream(method, url) as response:
            if response.status_code != 200:
                response.read()
            return response
    return api.request(method, url)  # (a finished run's event stream ends by itself)


@pytest.fixture
def team(admin: Api) -> Team:
    members = {"owner": admin.new_user("owner@example.com")}
    for role in ("editor", "viewer", "stranger", "spare"):
        members[role] = admin.new_user(f"{role}@example.com")
    ids = {role: api.get("/auth/me").json()["id"] for role, api in members.items()}
    ids["target"] = ids.pop("spare")
    members.pop("spare")
    return Team(members, ids)


def test_every_route_of_a_project_answers_each_role_as_it_should(
    live: LiveServer, team: Team, llm: ScriptedLLM, mysql_source: ServerSource
) -> None:
    routes = project_routes(live)
    assert len(routes) == KNOWN, f"a new route? OWNER_ONLY if an owner's, then KNOWN: {routes}"
    owner = team.members["owner"]
    llm.script(
        code_reply("import pandas as pd\ndisplay(pd.DataFrame({'a': [1, 2]}))"),
        final_reply("'Here.'"),
        final_reply("'@x[1]'"),
    )
    shared = world(owner, team, mysql_source, run=True)
    table: Counter[tuple[str, str]] = Counter()
    wrong: list[str] = []
    for route in routes:
        for role in ROLES:
            ids = shared
            if route.startswith("DELETE ") and expected(route, role) == "allowed":
                ids = {**shared, **world(owner, team, mysql_source, run=False)}
            response = call(team.members[role], route, ids)
            got = outcome(response)
            if route in MADE_UP and response.status_code == 404:
                got = "allowed" if response.json()["code"] == MADE_UP[route] else got
            table[(role, got)] += 1
            if got != expected(route, role):
                wrong.append(f"{route} as {role}: {got}, expected {expected(route, role)}")
    assert not wrong, "\n".join(wrong)
    print("\nroutes by role:", dict(sorted(table.items())))


def test_the_shared_link_is_no_projects_route_and_needs_no_login(
    live: LiveServer, team: Team
) -> None:
    """GET /shared/{token} names no id of a project (the walk above leaves it out): it
    answers a made-up token the same 404 whoever asks, logged in or not."""
    paths = httpx.get(f"{live.url}/api/v1/openapi.json").json()["paths"]
    assert "get" in paths["/api/v1/shared/{token}"] and not PROJECT_IDS.search("/shared/{token}")
    token = "x" * 43
    answers = [httpx.get(f"{live.url}/api/v1/shared/{token}")]
    answers += [team.members[role].get(f"/shared/{token}") for role in ROLES]
    assert {(r.status_code, r.text) for r in answers} == {(404, answers[0].text)}
    assert answers[0].json()["code"] == "share_not_found"

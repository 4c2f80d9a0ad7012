"""`workbench members` as a team runs it: the owner adds a colleague by email, changes their
role and sees what each member's questions spent; the colleague's own CLI is refused what
their role cannot do, with the server's sentence; the last owner cannot leave; the runs
list says who asked."""

from __future__ import annotations

import dataclasses

import pytest

from tests.api.conftest import SALES
from tests.api.test_query import ask, finished
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_an_owner_manages_members_and_each_cli_does_what_its_role_allows(
    cli: Cli,  # noqa: F811
    alice: Api,
    bob: Api,
    llm: ScriptedLLM,
) -> None:
    project = alice.project("Team")
    assert alice.upload(project["id"], "sales.csv", SALES).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Q3"}).json()
    llm.script(final_reply("'Two regions.'"))
    finished(ask(alice, session["id"], "How many regions?"))

    added = cli.run("members", "add", "Bob@Example.com", "viewer", "-p", "Team")
    assert added.code == 0, added.stderr
    assert "bob@example.com is now a viewer of Team." in added.stdout
    listed = cli.run("members", "-p", "Team")
    assert listed.code == 0, listed.stderr
    lines = [line.split() for line in listed.stdout.splitlines()]
    assert ["alice@example.com", "owner", "1"] in [line[:3] for line in lines]
    assert ["bob@example.com", "viewer", "0"] in [line[:3] for line in lines]

    token = bob.post("/auth/tokens", json={"name": "bob's cli"}).json()["token"]
    bobs = dataclasses.replace(cli, token=token, home=cli.home / "bob")
    bobs.home.mkdir()
    projects = bobs.run("projects")
    assert projects.code == 0 and "Team" in projects.stdout and "viewer" in projects.stdout
    refused = bobs.run("members", "add", "alice@example.com", "editor", "-p", "Team")
    assert refused.code != 0
    assert "You are a viewer of this project" in refused.stderr

    promoted = cli.run("members", "set", "bob@example.com", "editor", "-p", "Team")
    assert promoted.code == 0 and "bob@example.com is now an editor of Team." in promoted.stdout
    runs = bobs.run("runs", "list", session["id"])
    assert runs.code == 0 and "alice@example.com" in runs.stdout, runs.stdout
    shown = bobs.run("runs", "show", finished_run(alice, session["id"]))
    assert "asked by alice@example.com" in shown.stdout

    last = cli.run("members", "leave", "-p", "Team", "--yes")
    assert last.code != 0 and "last owner" in last.stderr.lower(), last.stderr
    left = bobs.run("members", "leave", "-p", "Team", "--yes")
    assert left.code == 0 and "You left Team." in left.stdout
    assert "Team" not in bobs.run("projects").stdout
    gone = cli.run("members", "remove", "bob@example.com", "-p", "Team", "--yes")
    assert gone.code == 1 and "bob@example.com is not a member of this project." in gone.stderr
    wrong = cli.run("members", "add", "bob@example.com", "boss", "-p", "Team")
    assert wrong.code == 2 and "'boss' is not a role" in wrong.stderr


def finished_run(api: Api, session_id: str) -> str:
    return str(api.get(f"/sessions/{session_id}/runs").json()["items"][0]["id"])

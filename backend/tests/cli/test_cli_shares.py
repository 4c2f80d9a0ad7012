"""`workbench share` and `workbench audit` as a user runs them: a link made for chosen
questions (printed once, with how to end it), opened without logging in, listed, revoked;
the project's audit log as a table, filtered by action and paged, and verified."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from sqlalchemy import update

from app.models import AuditEvent
from tests.api.test_shares import answered
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_a_link_is_made_for_chosen_questions_listed_and_revoked(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    project = alice.project("Sales")
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Regions"}).json()
    answered(alice, llm, session["id"], "Who leads?", "North leads.")
    answered(alice, llm, session["id"], "Who trails?", "South trails.")

    made = cli.run("share", "create", "Regions", "--run", "2", "--expires-days", "7")
    assert made.code == 0, made.stderr
    assert "Anyone with this link sees the report of Regions, without logging in" in made.stdout
    assert "shown only this once" in made.stdout
    url = next(line for line in made.stdout.splitlines() if "/api/v1/shared/" in line).strip()
    page = httpx.get(url, timeout=60)
    assert page.status_code == 200 and "South trails." in page.text
    assert "North leads." not in page.text

    listed = cli.run("share", "list", "Regions")
    assert listed.code == 0, listed.stderr
    share_id = next(line.split()[0] for line in listed.stdout.splitlines()[1:])
    row = next(line for line in listed.stdout.splitlines() if line.startswith(share_id))
    assert row.split()[1:3] == ["active", "1"] and "alice@example.com" in row
    assert (
        url.rsplit("/", 1)[1]
        not in listed.stdout + cli.run("share", "list", "Regions", "--json").stdout
    )

    revoked = cli.run("share", "revoke", share_id)
    assert revoked.code == 0 and "opens nothing from now on" in revoked.stdout
    assert httpx.get(url, timeout=60).status_code == 404
    assert "revoked" in cli.run("share", "list", "Regions").stdout

    wrong = cli.run("share", "create", "Regions", "--run", "3")
    assert wrong.code == 1 and "--run: the session has 2 questions, not 3." in wrong.stderr
    bad = cli.run("share", "revoke", "nonsense")
    assert bad.code == 1 and "is not the id of a link" in bad.stderr


def test_the_audit_log_reads_as_a_table_by_action_and_page(
    cli: Cli,  # noqa: F811
    admin: Api,
    alice: Api,
) -> None:
    project = alice.project("Team")
    for email in ("bob@example.com", "carol@example.com"):
        admin.new_user(email).close()
        added = alice.post(
            f"/projects/{project['id']}/members", json={"email": email, "role": "viewer"}
        )
        assert added.status_code == 201

    log = cli.run("audit", "Team")
    assert log.code == 0, log.stderr
    lines = log.stdout.splitlines()
    assert lines[0].split() == ["WHEN", "WHO", "ACTION", "WHAT"]
    assert "member.added" in lines[1] and "added carol@example.com as viewer." in lines[1]
    assert "project.created" in lines[3] and "created the project “Team”." in lines[3]
    assert lines[-1] == "Events 1 to 3 of 3."

    members = cli.run("audit", "Team", "--action", "member", "--limit", "1", "--page", "2")
    assert members.code == 0, members.stderr
    assert "added bob@example.com as viewer." in members.stdout
    assert "carol" not in members.stdout and "project.created" not in members.stdout
    assert members.stdout.splitlines()[-1] == "Events 2 to 2 of 2."
    first = cli.run("audit", "Team", "--action", "member", "--limit", "1")
    assert first.stdout.splitlines()[-1] == "Events 1 to 1 of 2; --page 2 shows older ones."
    assert "No events of share in Team." in cli.run("audit", "Team", "-a", "share").stdout


def test_audit_verify_says_intact_or_names_the_changed_event(
    cli: Cli,  # noqa: F811
    live: LiveServer,
    alice: Api,
) -> None:
    alice.project("Team")
    other = alice.project("Other")
    intact = cli.run("audit", "verify", "Team")
    assert intact.code == 0, intact.stderr
    assert re.fullmatch(r"Team: intact: 1 events, last hash [0-9a-f]{16}\.\n", intact.stdout)

    async def tamper() -> None:  # the embedded stack: SQLite, anyone with the file can
        async with live.state.engine.begin() as conn:
            await conn.execute(
                update(AuditEvent)
                .where(AuditEvent.project_id == uuid.UUID(other["id"]))
                .values(summary="nothing happened")
            )

    live.call(tamper())
    every = cli.run("audit", "verify")
    assert every.code == 1
    said = dict(line.split(": ", 1) for line in every.stdout.splitlines())
    assert said["Team"].startswith("intact: 1 events")
    assert re.fullmatch(
        r"event #1 \(project.created at .* UTC, id [0-9a-f-]{36}\) was changed after it was "
        r"recorded\.",
        said["Other"],
    )
    refused = cli.run("audit", "Team", "Other")
    assert refused.code != 0 and "One project at a time" in refused.stderr + refused.stdout

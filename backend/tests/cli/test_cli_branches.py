"""`workbench sessions branch` and `tree` as a user runs them: a branch after a question
named by its number, the tree printed with what each branch continues after."""

from __future__ import annotations

import pytest

from tests.api.branching import three_questions
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_a_branch_is_made_by_number_and_the_tree_printed(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    session, runs = three_questions(alice, llm)
    made = cli.run("sessions", "branch", session["id"], "--after", "2")
    assert made.code == 0, made.stderr
    assert made.stdout.startswith("Created session Sales — branch after Q2 (")
    listed = alice.get(f"/projects/{session['project_id']}/sessions").json()["items"]
    [branch] = [s for s in listed if s["parent_session_id"] == session["id"]]
    assert branch["branched_after_run_id"] == runs[1]["id"]

    shown = cli.run("sessions", "tree", branch["id"])
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"Sales ({session['id']})"
    assert lines[1] == (
        f"  Sales — branch after Q2 ({branch['id']})  after: Question answered by A2"
    )

    wrong = cli.run("sessions", "branch", session["id"], "--after", "4")
    assert wrong.code == 1 and "--after: the session has 3 questions, not 4." in wrong.stderr
    refused = cli.run("sessions", "delete", session["id"], "--yes")
    assert refused.code == 1 and "has 1 branch" in refused.stderr
    kept = cli.run("sessions", "delete", session["id"], "--yes", "--branches", "keep")
    assert kept.code == 0, kept.stderr
    assert alice.get(f"/sessions/{branch['id']}").json()["parent_session_id"] is None

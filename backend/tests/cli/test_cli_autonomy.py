"""`workbench sessions` and autonomy (issue 44): review_repairs from the command line, and a
repair fan-out as `workbench ask` shows it, its approval answered at the prompt."""

from __future__ import annotations

from tests.api.test_plans_and_checks import agent_settings
from tests.api.test_repair_fanout import Model
from tests.cli.test_cli import Cli, cli, runs_of, the_session  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

FAILING = code_reply("print(undefined_total)")
STRATEGIES = {
    "re-read the data's real columns and types": "raise ValueError('not this way')",
    "a simpler method": "total = 40 + 2\nprint('total', total)",
    "a different library": "total = 41  # different-library\nprint('total', total)",
}


def test_sessions_take_each_autonomy_level(
    cli: Cli,  # noqa: F811
    alice: Api,
) -> None:
    created = cli.run("sessions", "create", "Careful", "--autonomy", "review_repairs", "--json")
    assert created.code == 0, created.stderr
    session = the_session(alice)
    assert session["autonomy"] == "review_repairs"
    for level in ("review", "auto", "review_repairs"):
        changed = cli.run("sessions", "autonomy", session["id"], level)
        assert changed.code == 0, changed.stderr
        assert alice.get(f"/sessions/{session['id']}").json()["autonomy"] == level
    said = cli.run("sessions", "autonomy", session["id"], "review_repairs").stdout
    assert "asks before a repair" in said
    wrong = cli.run("sessions", "autonomy", session["id"], "sometimes")
    assert wrong.code == 2 and alice.get(f"/sessions/{session['id']}").json()["autonomy"] == (
        "review_repairs"
    )
    listed = cli.run("sessions")
    assert listed.code == 0 and "review_repairs" in listed.stdout


def test_ask_shows_the_repair_and_asks_only_before_repairs(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
    long_steps: LiveServer,
) -> None:
    assert cli.run("sessions", "create", "Repairs", "--autonomy", "review_repairs").code == 0
    session = the_session(alice)
    model = Model(
        [FAILING, FAILING, final_reply("f'The answer is {total}.'")],
        STRATEGIES,
        reject="different-library",
    )
    llm.script()
    llm.responder = model
    try:
        with agent_settings(long_steps, AGENT_MAX_STEPS=6):
            asked = cli.run("ask", "--session", session["id"], "Sum?", stdin="approve\napprove\n")
    finally:
        llm.responder = None
    assert asked.code == 0, asked.stderr
    out = asked.stdout
    # Step 1 ran without asking; the retry (step 2) and the repair's winner (step 3) asked.
    assert out.count("waits for your review") == 2, out
    assert "Repair: 3 strategies, #2 continued (a simpler method)" in out
    assert "The answer is 42." in out
    run = runs_of(alice, session["id"])[0]
    assert [a["step"] for a in run["approvals"]] == [2, 3]

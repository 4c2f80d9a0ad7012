"""A project's checks: written by editors, run in the background through the product as
real questions (the scripted model answers), scored as `workbench eval` scores, with a
history (issue 41). On both stacks."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from app.checks.runner import INTERRUPTED
from app.cli.eval_runner import AUTO_ANSWER
from app.models.base import utcnow
from app.models.knowledge import CheckResult, CheckRun
from tests.api.test_query import ask
from tests.conftest import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    WAIT_FOR_GO,
    Api,
    release,
    reset_state,
    stack_settings,
)
from tests.support.llm import HttpError, ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import until

FINISHED = ("succeeded", "failed", "cancelled")


def add_check(api: Api, project_id: str, **body: Any) -> dict[str, Any]:
    response = api.post(f"/projects/{project_id}/checks", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def start(api: Api, project_id: str, **body: Any) -> dict[str, Any]:
    response = api.post(f"/projects/{project_id}/check-runs", json=body)
    assert response.status_code == 202, response.text
    return dict(response.json())


def check_run_when(
    api: Api, check_run_id: str, done: Any, timeout: float = 120.0
) -> dict[str, Any]:
    """The check run once `done(check_run)` holds (its progress read as a user reads it)."""
    deadline = time.monotonic() + timeout
    while True:
        found = api.get(f"/check-runs/{check_run_id}")
        assert found.status_code == 200, found.text
        if done(found.json()):
            return dict(found.json())
        assert time.monotonic() < deadline, f"still {found.json()}"
        time.sleep(0.1)


def finished(api: Api, check_run_id: str) -> dict[str, Any]:
    return check_run_when(api, check_run_id, lambda c: c["status"] in FINISHED)


def test_checks_run_as_questions_and_score_one_right_one_wrong(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    total = add_check(alice, project["id"], question="What is 6 times 7?", expected={"total": 42})
    assert total["expected"] == {"total": "42"}
    mean = add_check(
        alice, project["id"], question="What is the mean?", expected="7.5", format="@answer[x]"
    )
    assert mean["expected"] == {"answer": "7.5"}
    listed = alice.get(f"/projects/{project['id']}/checks").json()
    assert [c["id"] for c in listed["items"]] == [total["id"], mean["id"]]
    llm.script(final_reply("'It is 42. @total[42]'"), final_reply("'About 8. @answer[8]'"))

    started = start(alice, project["id"])
    assert started["status"] == "running" and started["total"] == 2
    assert [r["status"] for r in started["results"]] == ["pending", "pending"]
    done = finished(alice, started["id"])

    assert done["status"] == "succeeded", done
    assert (done["passed"], done["failed"], done["errors"], done["accuracy"]) == (1, 1, 0, 0.5)
    first, second = done["results"]
    assert (first["check_id"], first["status"]) == (total["id"], "passed")
    assert first["answer"] == "It is 42. @total[42]"
    assert (second["check_id"], second["status"]) == (mean["id"], "failed")
    assert second["detail"] == "@answer: 8 given, 7.5 expected"
    # Each was asked as a real question, in the format the eval harness asks for.
    prompts = llm.prompts()
    assert "What is 6 times 7?" in prompts[0] and "@total[...]" in prompts[0]
    assert "Answer format: @answer[x]" in prompts[1]
    for result in done["results"]:
        run = alice.get(f"/runs/{result['run_id']}").json()
        assert run["status"] == "succeeded" and run["final_answer"] == result["answer"]
        assert run["session_id"] == done["session_id"]
    session = alice.get(f"/sessions/{done['session_id']}").json()
    assert session["title"].startswith("Checks · ")
    assert done["tokens_in"] > 0 and done["tokens_out"] > 0
    assert done["finished_at"] >= done["started_at"]
    actions = [e["action"] for e in alice.get(f"/projects/{project['id']}/audit").json()["items"]]
    assert actions.count("check.created") == 2
    assert "check_run.started" in actions and "check_run.finished" in actions


def test_a_dead_model_gives_error_results_and_the_run_finishes_then_history_lists_both(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    add_check(alice, project["id"], question="Q1", expected={"x": 1})
    add_check(alice, project["id"], question="Q2", expected={"y": 2})
    llm.script(HttpError(500, "The server had an error"), HttpError(500, "The server had an error"))
    dead = finished(alice, start(alice, project["id"])["id"])
    assert dead["status"] == "succeeded"  # every check was asked
    assert (dead["passed"], dead["failed"], dead["errors"], dead["accuracy"]) == (0, 0, 2, 0.0)
    for result in dead["results"]:
        assert result["status"] == "error" and result["run_id"]
        assert "failed with a server error (HTTP 500)" in result["detail"]

    llm.script(final_reply("'@x[1]'"), final_reply("'@y[2]'"))
    alive = finished(alice, start(alice, project["id"])["id"])
    assert (alive["passed"], alive["accuracy"]) == (2, 1.0)
    history = alice.get(f"/projects/{project['id']}/check-runs").json()
    assert [c["id"] for c in history["items"]] == [alive["id"], dead["id"]]
    assert [c["accuracy"] for c in history["items"]] == [1.0, 0.0]


def test_one_check_run_at_a_time_and_progress_shows_while_it_runs(
    long_steps: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    add_check(alice, project["id"], question="Held", expected={"x": 1})
    add_check(alice, project["id"], question="Next", expected={"y": 2})
    llm.script(code_reply(WAIT_FOR_GO), final_reply("'@x[1]'"), final_reply("'@y[3]'"))
    started = start(alice, project["id"])
    running = check_run_when(alice, started["id"], lambda c: c["results"][0]["run_id"])
    assert running["status"] == "running"
    assert [r["status"] for r in running["results"]] == ["pending", "pending"]
    with alice.stream("GET", f"/runs/{running['results'][0]['run_id']}/events") as response:
        assert until(response, "step.code")[-1].event == "step.code"

    again = alice.post(f"/projects/{project['id']}/check-runs", json={})
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "check_run_in_progress"

    release(long_steps, {"id": running["session_id"]})
    done = finished(alice, started["id"])
    assert [r["status"] for r in done["results"]] == ["passed", "failed"]
    llm.script(final_reply("'@x[1]'"), final_reply("'@y[2]'"))
    after = start(alice, project["id"])  # the next one may start
    assert finished(alice, after["id"])["accuracy"] == 1.0


def test_a_check_from_a_run_takes_its_question_and_answer(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(final_reply("'North sells more: @region[North] @total[2510.75]'"))
    events = ask(alice, session["id"], "Which region sells more?")
    run_id = events[0].data["run_id"]
    check = add_check(alice, session["project_id"], from_run_id=run_id)
    assert check["question"] == "Which region sells more?"
    assert check["expected"] == {"region": "North", "total": "2510.75"}
    assert check["from_run_id"] == run_id
    llm.script(HttpError(500, "The server had an error"))
    failed = ask(alice, session["id"], "And now?")[0].data["run_id"]
    refused = alice.post(f"/projects/{session['project_id']}/checks", json={"from_run_id": failed})
    assert (refused.status_code, refused.json()["code"]) == (422, "run_not_usable")
    assert "succeeded" in refused.json()["detail"]


def test_bad_checks_are_refused_with_a_sentence(alice: Api) -> None:
    project = alice.project()
    url = f"/projects/{project['id']}/checks"
    for body in (
        {"question": "Q"},
        {"question": "Q", "expected": {"not a word": 1}},
        {"question": "Q", "expected": {"x": "a]b"}},
        {"question": "Q", "expected": {}},
    ):
        response = alice.post(url, json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["code"] and response.json()["detail"]
    empty = alice.post(f"/projects/{project['id']}/check-runs", json={})
    assert (empty.status_code, empty.json()["code"]) == (422, "no_checks")
    add_check(alice, project["id"], question="Q", expected={"x": 1})
    unknown = alice.post(f"/projects/{project['id']}/check-runs", json={"model": "nope"})
    assert (unknown.status_code, unknown.json()["code"]) == (400, "unknown_model")


def test_editing_and_deleting_a_check_leaves_history_as_it_was(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    check = add_check(alice, project["id"], question="Q", expected={"x": 1})
    llm.script(final_reply("'@x[1]'"))
    done = finished(alice, start(alice, project["id"])["id"])
    changed = alice.patch(f"/checks/{check['id']}", json={"expected": {"x": 2}})
    assert changed.status_code == 200 and changed.json()["expected"] == {"x": "2"}
    assert alice.delete(f"/checks/{check['id']}").status_code == 204
    assert alice.get(f"/projects/{project['id']}/checks").json()["items"] == []
    kept = alice.get(f"/check-runs/{done['id']}").json()["results"][0]
    assert (kept["check_id"], kept["expected"], kept["status"]) == (None, {"x": "1"}, "passed")
    actions = [e["action"] for e in alice.get(f"/projects/{project['id']}/audit").json()["items"]]
    assert "check.updated" in actions and "check.deleted" in actions


def test_the_projects_budget_stops_a_check_run_with_a_clear_error(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    add_check(alice, project["id"], question="Q1", expected={"x": 1})
    add_check(alice, project["id"], question="Q2", expected={"y": 2})
    budget = alice.patch(f"/projects/{project['id']}", json={"budget_tokens": 200})
    assert budget.status_code == 200, budget.text
    llm.script(final_reply("'@x[1]'"), final_reply("'@y[2]'"))  # one call spends > 200
    stopped = finished(alice, start(alice, project["id"])["id"])
    assert stopped["status"] == "failed"
    assert stopped["error"].startswith("This project has used ")
    assert "token budget" in stopped["error"]
    assert stopped["results"][0]["run_id"] and stopped["results"][0]["status"] != "pending"
    second = stopped["results"][1]
    assert (second["status"], second["run_id"]) == ("error", None)
    assert second["detail"] == f"Not asked: {stopped['error']}"
    assert stopped["errors"] + stopped["passed"] + stopped["failed"] == 2
    # A spent budget refuses the next check run at once.
    again = alice.post(f"/projects/{project['id']}/check-runs", json={})
    assert (again.status_code, again.json()["code"]) == (403, "budget_exceeded")


def test_a_check_run_left_running_by_a_dead_process_is_failed_at_start_up(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    """What a process that died leaves behind: a check run `running` whose lock nobody
    holds. Start-up (create_app's lifespan calls recover_interrupted) fails it with a
    sentence, and a new check run may start."""
    project = alice.project()
    check = add_check(alice, project["id"], question="Q", expected={"x": 1})

    async def left_behind() -> str:
        async with live.state.session_factory() as db:
            check_run = CheckRun(
                project_id=uuid.UUID(project["id"]),
                status="running",
                model="openai/scripted",
                total=1,
                started_at=utcnow(),
            )
            db.add(check_run)
            await db.flush()
            db.add(
                CheckResult(
                    check_run_id=check_run.id,
                    check_id=uuid.UUID(check["id"]),
                    position=1,
                    question="Q",
                    expected={"x": "1"},
                )
            )
            await db.commit()
            return str(check_run.id)

    orphan = live.call(left_behind())
    assert live.call(live.state.checks.recover_interrupted()) == 1
    failed = alice.get(f"/check-runs/{orphan}").json()
    assert failed["status"] == "failed" and failed["finished_at"]
    assert failed["error"] == INTERRUPTED
    assert failed["results"][0]["status"] == "error" and failed["errors"] == 1
    assert failed["results"][0]["detail"] == f"Not asked: {INTERRUPTED}"
    # One left behind does not block the next run either (it is failed as that starts).
    orphan = live.call(left_behind())
    llm.script(final_reply("'@x[1]'"))
    fresh = finished(alice, start(alice, project["id"])["id"])
    assert fresh["status"] == "succeeded" and fresh["passed"] == 1
    assert alice.get(f"/check-runs/{orphan}").json()["status"] == "failed"


def test_the_agents_questions_are_answered_as_workbench_eval_answers_them(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    add_check(alice, project["id"], question="Revenue?", expected={"x": 1})
    llm.script(
        code_reply("choice = ask_user('Net or gross?')\nprint(choice)"), final_reply("'@x[1]'")
    )
    done = finished(alice, start(alice, project["id"])["id"])
    assert done["status"] == "succeeded" and done["passed"] == 1, done
    run = alice.get(f"/runs/{done['results'][0]['run_id']}").json()
    assert [i["answer"] for i in run["inputs"]] == [AUTO_ANSWER]
    assert f"ask_user returned the user's answer: '{AUTO_ANSWER}'" in str(
        llm.requests[1]["messages"]
    )


def test_a_check_run_cut_by_a_restart_is_failed_with_a_sentence_and_the_next_one_runs(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    """Embedded: the server stops while a check's step runs; after the restart the check
    run says it was interrupted, its check was not scored, and the checks run again."""
    settings = stack_settings(
        "embedded",
        tmp_path / "data",
        LLM_API_BASE=llm.api_base,
        SANDBOX_STEP_TIMEOUT_SECONDS=600,
    )
    first = LiveServer(settings).start()
    try:
        first.call(reset_state(first))
        api = Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        project = api.project()
        add_check(api, project["id"], question="Held", expected={"x": 1})
        llm.script(code_reply(WAIT_FOR_GO))
        started = start(api, project["id"])
        running = check_run_when(api, started["id"], lambda c: c["results"][0]["run_id"])
        with api.stream("GET", f"/runs/{running['results'][0]['run_id']}/events") as response:
            assert until(response, "step.code")[-1].event == "step.code"
        api.close()
    finally:
        first.stop()

    again = LiveServer(settings).start()
    try:
        api = Api(again).as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        cut = api.get(f"/check-runs/{started['id']}").json()
        assert (cut["status"], cut["error"]) == ("failed", INTERRUPTED)
        assert cut["results"][0]["status"] == "error" and cut["passed"] == 0
        llm.script(final_reply("'@x[1]'"))
        fresh = finished(api, start(api, project["id"])["id"])
        assert (fresh["status"], fresh["accuracy"]) == ("succeeded", 1.0)
        api.close()
    finally:
        again.stop()

"""Parallel repair (issue 44): a step that fails twice in a row fans out into repair
strategies, each in a worker of its own; the first that runs and that the critic accepts
continues the run. The real API and sandbox; the scripted LLM over HTTP answers each request
by what it shows (the strategies ask at the same time, in no fixed order)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_asking import follow
from tests.api.test_plans_and_checks import agent_settings, verdict
from tests.api.test_query import READ, _start_in_background, _wait_for, ask, finished, names, of
from tests.api.test_review import ask_until_approval, next_approval
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import collect

LABELS = ["re-read the data's real columns and types", "a simpler method", "a different library"]
FAILING = f"{READ}\nprint(df['revnue'].sum())"  # a misspelt column: KeyError
STRATEGY_CODE = {
    LABELS[0]: "raise ValueError('strategy one gives up')",
    LABELS[1]: f"{READ}\ntotal = df['revenue'].sum()\nprint('total', total)",
    LABELS[2]: f"{READ}\ntotal = 1.0  # different-library\nprint('total', total)",
}
FINAL = final_reply("f'Total revenue is {total}.'")


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content)
    return str(content or "")


class Model:
    """Answers the agent's steps in order (`main`), each strategy by its label, and the
    critic by whether the repair it reads is one it rejects."""

    def __init__(self, main: list[str], strategies: dict[str, str], reject: str = "") -> None:
        self.main = list(main)
        self.strategies = strategies
        self.reject = reject
        self.asked: list[str] = []  # the strategies' labels, as they asked
        self.lock = threading.Lock()
        self.rejected = threading.Event()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        last = text_of(messages[-1])
        if "You check a repair" in last:
            if self.reject and self.reject in last:
                self.rejected.set()
                return verdict("revise", "It makes the total up.")
            # The strategies run at once, in no fixed order: the approval waits for the
            # rejection, so that the rejected one is told as such on a machine of any speed
            # (not "stopped" because the approved one was quicker).
            if self.reject:
                self.rejected.wait(120)
            return verdict("approve", "It sums the real column.")
        with self.lock:
            for label, code in self.strategies.items():
                if f"Repair strategy: {label}." in last:
                    self.asked.append(label)
                    return code_reply(code, f"Strategy: {label}.")
            return self.main.pop(0) if self.main else "The script has no more replies."


@pytest.fixture
def answer_with(llm: ScriptedLLM, long_steps: LiveServer) -> Iterator[Callable[[Model], None]]:
    def use(model: Model) -> None:
        llm.script()
        llm.responder = model

    yield use
    llm.responder = None


def workspaces(live: LiveServer) -> list[str]:
    return sorted(p.name for p in Path(live.settings.DATA_DIR, "workspaces").iterdir())


def test_strategy_two_wins_and_continues_the_run(
    alice: Api, session, answer_with, long_steps: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    model = Model(
        [code_reply(FAILING), code_reply(FAILING), FINAL], STRATEGY_CODE, reject="different-library"
    )
    answer_with(model)
    with agent_settings(long_steps, AGENT_MAX_STEPS=6):
        events = ask(alice, session["id"], "Total revenue?")
    end = finished(events)
    assert end["status"] == "succeeded", end
    assert of(events, "final")[0]["answer"] == "Total revenue is 4490.75."
    [repaired] = of(events, "repair")
    assert repaired["step"] == 3 and repaired["strategies"] == LABELS
    assert repaired["chosen"] == 2  # 1-based, as `attempt`
    assert "its code failed" in repaired["reasons"][0]
    assert "strategy one gives up" in repaired["reasons"][0]
    assert "check rejected" in repaired["reasons"][2] and repaired["reasons"][1] == ""
    assert sorted(model.asked) == sorted(LABELS)
    # The repair is told before the step it became; that step ran the winner's code.
    told = [e.event for e in events if e.data.get("step") == 3]
    assert told[:3] == ["repair", "step.started", "model.delta"], told
    step3 = [e for e in events if e.event == "step.code" and e.data["step"] == 3]
    assert step3[0].data["code"] == STRATEGY_CODE[LABELS[1]]
    outputs = [d["output"] for d in of(events, "step.output") if d["step"] == 3]
    assert "total 4490.75" in "".join(outputs)

    run = alice.get(f"/runs/{end['run_id']}").json()
    assert [s["index"] for s in run["steps"]] == [1, 2, 3, 4]
    assert run["steps"][2]["code"] == STRATEGY_CODE[LABELS[1]] and run["steps"][2]["error"] is None
    assert run["steps"][0]["error"] and run["steps"][1]["error"]
    # The strategies' model calls and the critic's count: more than the steps' own tokens.
    assert run["tokens_in"] > sum(s["tokens_in"] for s in run["steps"])
    # The stored events show the repair as the stream did.
    with alice.stream("GET", f"/runs/{end['run_id']}/events", params={"after": 0}) as response:
        stored = of(collect(response), "repair")
    assert stored == [repaired]
    # The run as the history gives it (a reload) carries the repair too.
    assert run["repairs"] == [
        {k: repaired[k] for k in ("step", "strategies", "chosen", "reasons")} | {"attempt": None}
    ]
    history = alice.get(f"/sessions/{session['id']}/runs").json()
    listed = history["items"] if isinstance(history, dict) else history
    assert [r["repairs"] for r in listed if r["id"] == end["run_id"]] == [run["repairs"]]
    # The strategies' workers and folders are gone.
    assert not [name for name in workspaces(long_steps) if "-repair-" in name]


def test_when_no_strategy_works_the_run_goes_on_as_before(
    alice: Api, session, answer_with, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    failing = {label: "raise ValueError('no luck')" for label in LABELS}
    answer_with(Model([code_reply(FAILING), code_reply(FAILING), FINAL], failing))
    with agent_settings(live, AGENT_MAX_STEPS=5):
        events = ask(alice, session["id"], "Total revenue?")
    [repaired] = of(events, "repair")
    assert repaired["chosen"] is None and len(repaired["reasons"]) == 3
    assert all("no luck" in reason for reason in repaired["reasons"])
    # Step 3 is the model's own (it had no variable `total`: its answer fails, as it would
    # have without the repair), and the run ends as it would have.
    end = finished(events)
    run = alice.get(f"/runs/{end['run_id']}").json()
    assert run["steps"][2]["code"] == "final_answer(f'Total revenue is {total}.')"
    assert [(r["step"], r["chosen"]) for r in run["repairs"]] == [(3, None)]
    assert [s["index"] for s in run["steps"]] == [1, 2, 3, 4, 5]
    assert end["status"] == "failed"


def test_repair_respects_the_step_limit(alice: Api, session, answer_with, live: LiveServer) -> None:  # type: ignore[no-untyped-def]
    # AGENT_MAX_STEPS is 4: failures at steps 2 and 3 leave one step, so one strategy.
    fine = code_reply(f"{READ}\nprint(len(df))")
    model = Model([fine, code_reply(FAILING), code_reply(FAILING)], STRATEGY_CODE)
    answer_with(model)
    events = ask(alice, session["id"], "Total revenue?")
    [repaired] = of(events, "repair")
    assert repaired["step"] == 4 and repaired["strategies"] == LABELS[:1]
    assert model.asked == LABELS[:1] and repaired["chosen"] is None
    assert finished(events)["status"] == "failed"  # all steps used, as without repair
    # Failures at the last two steps: no step is left for a repair.
    answer_with(Model([fine, fine, code_reply(FAILING), code_reply(FAILING)], STRATEGY_CODE))
    assert "repair" not in names(ask(alice, session["id"], "Again?"))
    # REPAIR_STRATEGIES=0: no fan-out at all.
    with agent_settings(live, REPAIR_STRATEGIES=0):
        answer_with(Model([code_reply(FAILING), code_reply(FAILING), FINAL], STRATEGY_CODE))
        assert "repair" not in names(ask(alice, session["id"], "Once more?"))


def in_review_repairs(api: Api, session: dict[str, Any]) -> None:
    changed = api.patch(f"/sessions/{session['id']}", json={"autonomy": "review_repairs"})
    assert changed.status_code == 200 and changed.json()["autonomy"] == "review_repairs"
    assert api.get(f"/sessions/{session['id']}").json()["autonomy"] == "review_repairs"


def test_review_repairs_pauses_only_before_repairs(
    alice: Api, session, answer_with, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    in_review_repairs(alice, session)
    fine = code_reply(f"{READ}\nprint('rows', len(df))")
    main = [fine, code_reply(FAILING), code_reply(FAILING), FINAL]
    with agent_settings(live, AGENT_MAX_STEPS=6):
        answer_with(Model(main, STRATEGY_CODE, reject="different-library"))
        first = ask_until_approval(alice, session["id"], "Total revenue?")
        # Steps 1 and 2 ran without asking (an ordinary step, and one that failed); step
        # 3, a retry after the error, waits.
        request = first[-1]
        assert request.event == "approval.requested" and request.data["step"] == 3, names(first)
        assert "rows 4" in of(first, "step.output")[0]["output"]
        assert [d["step"] for d in of(first, "step.error")] == [2]
        run_id = request.data["run_id"]
        approved = alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"})
        assert approved.status_code == 200
        # The retry fails again: the fan-out's winner waits for approval before it runs.
        second = next_approval(alice, run_id, request.id)
        repaired = of(second, "repair")
        assert repaired and repaired[0]["chosen"] == 2 and repaired[0]["step"] == 4
        assert second[-1].data["step"] == 4
        assert second[-1].data["code"] == STRATEGY_CODE[LABELS[1]]
        assert not [d for d in of(second, "step.output") if "total" in d["output"]]
        assert alice.get(f"/runs/{run_id}").json()["status"] == "waiting_approval"
        approved = alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"})
        assert approved.status_code == 200
        rest = follow(alice, run_id, second[-1].id)
    assert "total 4490.75" in "".join(d["output"] for d in of(rest, "step.output"))
    # The answer after the repair ran on without asking.
    assert "approval.requested" not in names(rest)
    assert finished(rest)["status"] == "succeeded"
    assert of(rest, "final")[0]["answer"] == "Total revenue is 4490.75."
    run = alice.get(f"/runs/{run_id}").json()
    assert [a["step"] for a in run["approvals"]] == [3, 4]


def test_a_rejected_repair_does_not_run_and_the_run_goes_on(
    alice: Api, session, answer_with, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    in_review_repairs(alice, session)
    again = code_reply(f"{READ}\nprint('sum', df['revenue'].sum())")
    with agent_settings(live, AGENT_MAX_STEPS=5):
        answer_with(
            Model(
                [code_reply(FAILING), code_reply(FAILING), again, final_reply("'4490.75'")],
                STRATEGY_CODE,
                reject="different-library",
            )
        )
        request = ask_until_approval(alice, session["id"], "Total revenue?")[-1]
        run_id = request.data["run_id"]
        assert request.data["step"] == 2  # the retry after step 1's error
        assert (
            alice.post(f"/runs/{run_id}/approval", json={"decision": "approve"}).status_code == 200
        )
        second = next_approval(alice, run_id, request.id)
        assert second[-1].data["step"] == 3 and of(second, "repair")[0]["chosen"] == 2
        rejected = alice.post(
            f"/runs/{run_id}/approval", json={"decision": "reject", "feedback": "No."}
        )
        assert rejected.status_code == 200
        rest = follow(alice, run_id, second[-1].id)
    # The winner's code never ran; the model wrote step 4 itself, which ran without asking.
    assert "approval.requested" not in names(rest)
    assert "total 4490.75" not in "".join(d["output"] for d in of(rest, "step.output"))
    assert finished(rest)["status"] == "succeeded"
    run = alice.get(f"/runs/{run_id}").json()
    assert run["steps"][2]["error"] == "Rejected by the user: No."
    assert [a["decision"] for a in run["approvals"]] == ["approve", "reject"]


HOLD = (
    "import time\nimport pandas as pd\n"
    "pd.DataFrame({'v': [1]}).to_csv('started.csv', index=False)\n"
    "time.sleep(3600)\n"
)


def test_cancel_mid_repair_stops_every_strategy(
    alice: Api, session, answer_with, long_steps: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    held = {label: HOLD for label in LABELS}
    answer_with(Model([code_reply(FAILING), code_reply(FAILING), FINAL], held))
    folder = Path(long_steps.settings.DATA_DIR, "workspaces")
    with agent_settings(long_steps, AGENT_MAX_STEPS=6):
        thread, seen = _start_in_background(alice, session["id"], "Total revenue?")
        # Every strategy's code is running (each wrote its marker in its own folder).
        _wait_for(lambda: len(list(folder.glob("*-repair-*/started.csv"))) == 3, 120)
        run_id = seen[0].data["run_id"]
        cancelled = alice.post(f"/runs/{run_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        thread.join(60)
    # The strategies' code was killed and their folders removed (no hour-long sleep left).
    _wait_for(lambda: not list(folder.glob("*-repair-*")), 60)
    assert not (folder / session["id"] / "started.csv").exists()
    assert alice.get(f"/runs/{run_id}").json()["status"] == "cancelled"

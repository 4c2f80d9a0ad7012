"""Plans and answer checks, end to end: the real API and sandbox, the scripted LLM over HTTP.

The suite's server runs with both off (scripts answer the steps only); each test here turns
them on for itself (the orchestrator reads its settings at each run).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.api.test_query import READ, ask, finished, names, of
from tests.conftest import Api
from tests.support.llm import HttpError, ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer


@contextmanager
def agent_settings(live: LiveServer, **values: Any) -> Iterator[None]:
    before = {name: getattr(live.settings, name) for name in values}
    for name, value in values.items():
        setattr(live.settings, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(live.settings, name, value)


def verdict(kind: str, reason: str) -> str:
    return json.dumps({"verdict": kind, "reason": reason})


def last_user_text(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_the_agent_plans_first_and_revises_its_plan(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        "1. Read sales data.csv.\n2. Sum revenue by region.\n3. Answer.<end_plan>",
        code_reply(f"{READ}\nprint(df.shape)"),
        code_reply("totals = df.groupby('region')['revenue'].sum()\nprint(totals)"),
        "Established: North 2510.75, South 1980.0.\n1. Answer with both figures.<end_plan>",
        final_reply("'North sold more: 2510.75 against 1980.0.'"),
    )
    with agent_settings(live, AGENT_PLANNING_INTERVAL=2):
        events = ask(alice, session["id"], "Which region sold more?")
    end = finished(events)
    assert end["status"] == "succeeded"

    plans = of(events, "plan")
    assert [p["step"] for p in plans] == [1, 3]
    assert plans[0]["text"] == "1. Read sales data.csv.\n2. Sum revenue by region.\n3. Answer."
    assert plans[1]["text"].startswith("Established: North 2510.75")
    order = names(events)
    # The first plan comes before step 1 starts, the revision after step 2 ends.
    assert order.index("plan") < order.index("step.started")
    step2_end = next(
        i for i, e in enumerate(events) if e.event == "step.finished" and e.data["step"] == 2
    )
    assert (
        events.index(next(e for e in events if e.event == "plan" and e.data["step"] == 3))
        > step2_end
    )
    streamed = "".join(d["text"] for d in of(events, "plan.delta") if d["step"] == 1)
    assert "Sum revenue by region." in streamed
    # The plan's text never shows up as a step's own model output.
    assert not any("Sum revenue by region." in d["text"] for d in of(events, "model.delta"))

    # The first plan saw the files and the question; the revision saw what the steps found.
    first, revision = llm.requests[0], llm.requests[3]
    assert "sales data.csv" in str(first["messages"][0]["content"])  # the system prompt
    assert "Which region sold more?" in last_user_text(first)
    assert "2 steps into" in last_user_text(revision) and "2 steps are left" in last_user_text(
        revision
    )
    assert "2510.75" in "\n".join(str(m["content"]) for m in revision["messages"])
    # The steps after a plan were told to carry it out.
    assert "Now proceed and carry out this plan." in str(llm.requests[1]["messages"])

    run = alice.get(f"/runs/{end['run_id']}").json()
    assert [(p["step"], p["text"]) for p in run["plans"]] == [(p["step"], p["text"]) for p in plans]
    plan_tokens = sum(p["tokens_in"] + p["tokens_out"] for p in run["plans"])
    step_tokens = sum(s["tokens_in"] + s["tokens_out"] for s in run["steps"])
    assert plan_tokens > 0 and run["tokens_in"] + run["tokens_out"] == plan_tokens + step_tokens
    assert end["tokens_in"] == run["tokens_in"]


def test_a_check_approves_an_answer_its_outputs_support(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(f"{READ}\nprint(df['revenue'].sum())"),
        final_reply("'Total revenue is 4490.75.'"),
        verdict("approve", "The answer states the printed total."),
    )
    with agent_settings(live, AGENT_VERIFY_ROUNDS=1):
        events = ask(alice, session["id"], "Total revenue?")
    end = finished(events)
    assert end["status"] == "succeeded"
    checks = of(events, "verification")
    assert [(c["verdict"], c["reason"], c["step"]) for c in checks] == [
        ("approve", "The answer states the printed total.", 2)
    ]
    assert names(events).index("verification") < names(events).index("final")
    assert of(events, "final")[0]["answer"] == "Total revenue is 4490.75."

    # The check was shown the question, the code, what it printed and the answer.
    prompt = last_user_text(llm.requests[2])
    assert "Total revenue?" in prompt and "df['revenue'].sum()" in prompt
    assert "4490.75" in prompt and "<answer>\nTotal revenue is 4490.75.\n</answer>" in prompt

    run = alice.get(f"/runs/{end['run_id']}").json()
    assert [(v["verdict"], v["reason"]) for v in run["verifications"]] == [
        ("approve", "The answer states the printed total.")
    ]
    check_tokens = run["verifications"][0]["tokens_in"] + run["verifications"][0]["tokens_out"]
    step_tokens = sum(s["tokens_in"] + s["tokens_out"] for s in run["steps"])
    assert check_tokens > 0 and run["tokens_in"] + run["tokens_out"] == check_tokens + step_tokens


def test_a_revise_verdict_sends_the_agent_back_with_the_reason(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(f"{READ}\nprint(df['revenue'].sum())"),
        final_reply("'Total revenue is 5000.'"),
        verdict("revise", "The output shows 4490.75, not 5000."),
        final_reply("'Total revenue is 4490.75.'"),
        verdict("approve", "Now it matches the output."),
    )
    with agent_settings(live, AGENT_VERIFY_ROUNDS=1):
        events = ask(alice, session["id"], "Total revenue?")
    end = finished(events)
    assert end["status"] == "succeeded"
    assert [c["verdict"] for c in of(events, "verification")] == ["revise", "approve"]
    errors = of(events, "step.error")
    assert len(errors) == 1 and errors[0]["step"] == 2
    assert "The output shows 4490.75, not 5000." in errors[0]["error"]
    # The model read the reason before its next answer, which is the one the user gets.
    assert "The output shows 4490.75, not 5000." in str(llm.requests[3]["messages"])
    assert of(events, "final") == [
        {
            "run_id": end["run_id"],
            "seq": of(events, "final")[0]["seq"],
            "answer": "Total revenue is 4490.75.",
        }
    ]
    run = alice.get(f"/runs/{end['run_id']}").json()
    assert run["final_answer"] == "Total revenue is 4490.75."
    assert [v["verdict"] for v in run["verifications"]] == ["revise", "approve"]


def test_after_its_last_revision_the_answer_stands_with_the_checks_doubt(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        final_reply("'About 4,500.'"),
        verdict("revise", "No code ran, so the figure is not supported."),
        final_reply("'About 4,500, I am sure.'"),
        verdict("revise", "Still no code ran."),
    )
    with agent_settings(live, AGENT_VERIFY_ROUNDS=1):
        events = ask(alice, session["id"], "Total revenue?")
    end = finished(events)
    assert end["status"] == "succeeded" and len(llm.requests) == 4  # no third round
    checks = of(events, "verification")
    assert [(c["verdict"], c["final"]) for c in checks] == [("revise", False), ("revise", True)]
    assert of(events, "final")[0]["answer"] == "About 4,500, I am sure."
    run = alice.get(f"/runs/{end['run_id']}").json()
    assert run["verifications"][-1]["reason"] == "Still no code ran."


def test_a_check_that_cannot_reach_the_model_fails_the_run_clearly(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(final_reply("'42'"), HttpError(503, "upstream overloaded"))
    with agent_settings(live, AGENT_VERIFY_ROUNDS=1):
        end = finished(ask(alice, session["id"], "The answer?"))
    assert end["status"] == "failed"
    assert end["error"].startswith("The model server at ") and (
        "failed with a server error (HTTP 503) (upstream overloaded)" in end["error"]
    ), end["error"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"verdict": "approve", "reason": "Fine."}', ("approve", "Fine.")),
        (
            'Sure!\n```json\n{"verdict": "REVISE", "reason": "Wrong sum."}\n```',
            ("revise", "Wrong sum."),
        ),
        (
            "I would revise this: the sum is wrong.",
            ("revise", "I would revise this: the sum is wrong."),
        ),
        ("Looks right to me.", ("approve", "Looks right to me.")),
    ],
)
def test_verdicts_are_read_from_what_models_actually_write(
    reply: str, expected: tuple[str, str]
) -> None:
    from app.agent.checking import parse_verdict

    assert parse_verdict(reply) == expected

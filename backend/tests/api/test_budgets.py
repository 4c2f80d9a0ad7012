"""What sessions and projects cost, and project budgets: through the real API, with the
scripted LLM, on both stacks.

Tokens come from the scripted model's usage (about four characters a token); USD prices
from LiteLLM's list for openai/gpt-4o-mini (the scripted server answers under any name).
"""

from __future__ import annotations

from typing import Any

import pytest

from app.agent.model import step_cost
from app.config import ModelPrice
from tests.api.conftest import SALES
from tests.api.test_query import READ, ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

PRICED = "openai/gpt-4o-mini"


@pytest.fixture
def project(alice: Api) -> dict[str, Any]:
    project = alice.project()
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    return project


def new_session(api: Api, project: dict[str, Any], title: str) -> dict[str, Any]:
    response = api.post(f"/projects/{project['id']}/sessions", json={"title": title})
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_sessions_and_projects_carry_what_their_runs_cost(
    alice: Api, project, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    first, second = new_session(alice, project, "One"), new_session(alice, project, "Two")
    assert first["tokens_in"] == first["tokens_out"] == 0 and first["cost_usd"] is None

    ends = []
    for session, model in ((first, PRICED), (first, PRICED), (second, "openai/scripted")):
        llm.script(code_reply("print(6 * 7)"), final_reply("'42'"))
        ends.append(finished(ask(alice, session["id"], "Six times seven?", model=model)))
    assert all(e["status"] == "succeeded" and e["tokens_in"] > 0 for e in ends)

    one = alice.get(f"/sessions/{first['id']}").json()
    assert one["tokens_in"] == ends[0]["tokens_in"] + ends[1]["tokens_in"]
    assert one["tokens_out"] == ends[0]["tokens_out"] + ends[1]["tokens_out"]
    assert one["cost_usd"] == pytest.approx(ends[0]["cost_usd"] + ends[1]["cost_usd"])
    two = alice.get(f"/sessions/{second['id']}").json()
    assert (two["tokens_in"], two["cost_usd"]) == (ends[2]["tokens_in"], None)  # no price known

    whole = alice.get(f"/projects/{project['id']}").json()
    assert whole["tokens_in"] == sum(e["tokens_in"] for e in ends)
    assert whole["tokens_out"] == sum(e["tokens_out"] for e in ends)
    assert whole["cost_usd"] == pytest.approx(one["cost_usd"])
    assert whole["budget_usd"] is None and whole["budget_tokens"] is None

    listed = alice.get(f"/projects/{project['id']}/sessions").json()["items"]
    assert {s["id"]: s["tokens_in"] for s in listed} == {
        first["id"]: one["tokens_in"],
        second["id"]: two["tokens_in"],
    }
    assert alice.get("/projects").json()["items"][0]["tokens_out"] == whole["tokens_out"]


def test_the_owner_sets_and_removes_budgets(alice: Api, bob: Api, project) -> None:  # type: ignore[no-untyped-def]
    path = f"/projects/{project['id']}"
    set_both = alice.patch(path, json={"budget_usd": 2.5, "budget_tokens": 50_000})
    assert set_both.status_code == 200
    assert (set_both.json()["budget_usd"], set_both.json()["budget_tokens"]) == (2.5, 50_000)
    renamed = alice.patch(path, json={"name": "Renamed"}).json()  # budgets left out: kept
    assert (renamed["budget_usd"], renamed["budget_tokens"]) == (2.5, 50_000)
    removed = alice.patch(path, json={"budget_usd": None}).json()
    assert (removed["budget_usd"], removed["budget_tokens"]) == (None, 50_000)

    negative = alice.patch(path, json={"budget_tokens": -1})
    assert negative.status_code == 422 and negative.json()["code"] == "validation_error"
    assert bob.patch(path, json={"budget_usd": 1000}).status_code == 404
    assert alice.get(path).json()["budget_usd"] is None


def test_a_project_past_its_budget_refuses_questions_until_it_is_raised(
    alice: Api, project, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    session = new_session(alice, project, "Spending")
    llm.script(code_reply("print(1)"), final_reply("'one'"))
    spent = finished(ask(alice, session["id"], "One?", model=PRICED))
    used = spent["tokens_in"] + spent["tokens_out"]

    path = f"/projects/{project['id']}"
    assert alice.patch(path, json={"budget_tokens": used}).status_code == 200
    llm.script(final_reply("'never asked'"))
    refused = alice.post(f"/sessions/{session['id']}/query", json={"query": "Two?"})
    assert refused.status_code == 403 and refused.json()["code"] == "budget_exceeded"
    detail = refused.json()["detail"]
    assert f"used {used:,} of its {used:,} token budget" in detail and "raise" in detail
    assert llm.requests == []  # the model was not called

    alice.patch(path, json={"budget_tokens": None, "budget_usd": spent["cost_usd"] / 2})
    refused = alice.post(f"/sessions/{session['id']}/query", json={"query": "Two?"})
    assert refused.status_code == 403 and "$" in refused.json()["detail"]
    assert "budget" in refused.json()["detail"]

    # Raised: the session takes questions again (the refusal left nothing locked).
    alice.patch(path, json={"budget_usd": None})
    assert finished(ask(alice, session["id"], "Two?"))["status"] == "succeeded"


def test_a_run_that_crosses_the_budget_stops_after_that_step(
    alice: Api, project, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    session = new_session(alice, project, "Crossing")
    path = f"/projects/{project['id']}"
    alice.patch(path, json={"budget_tokens": 200})  # one model call spends more than this
    llm.script(
        code_reply(f"{READ}\ntotal = df['revenue'].sum()\nprint(total)"),
        code_reply("print(total * 2)"),
        final_reply("'never reached'"),
    )
    events = ask(alice, session["id"], "Total revenue, doubled?")
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"].startswith("The project's token budget ran out during this run")
    assert "stopped after its last step" in end["error"]
    assert len(llm.requests) == 1  # no model call after the step that crossed it
    assert [d["step"] for d in of(events, "step.finished")] == [1]
    assert "4490.75" in of(events, "step.output")[0]["output"]  # that step's work is kept
    run = alice.get(f"/runs/{end['run_id']}").json()
    assert run["status"] == "failed" and run["error"] == end["error"]
    assert [s["index"] for s in run["steps"]] == [1]
    assert alice.get(path).json()["tokens_in"] == end["tokens_in"] > 200

    # The next question is refused before it starts; once raised, the variables are there.
    refused = alice.post(f"/sessions/{session['id']}/query", json={"query": "Again?"})
    assert refused.status_code == 403 and refused.json()["code"] == "budget_exceeded"
    alice.patch(path, json={"budget_tokens": None})
    llm.script(code_reply("print(total * 2)"), final_reply("'8981.5'"))
    again = ask(alice, session["id"], "Total revenue, doubled?")
    assert finished(again)["status"] == "succeeded"
    assert "8981.5" in of(again, "step.output")[0]["output"]


def test_a_usd_budget_stops_a_run_mid_way(alice: Api, project, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    session = new_session(alice, project, "Dollars")
    path = f"/projects/{project['id']}"
    alice.patch(path, json={"budget_usd": 0.00001})  # a thousandth of a cent
    llm.script(code_reply("print(1)"), code_reply("print(2)"), final_reply("'never reached'"))
    end = finished(ask(alice, session["id"], "Count?", model=PRICED))
    assert end["status"] == "failed" and end["cost_usd"] > 0.00001
    assert end["error"].startswith("The project's budget ran out during this run")
    assert "$0.00001 was left" in end["error"] and len(llm.requests) == 1


def test_llm_prices_price_models_litellm_does_not_know() -> None:
    prices = {"openai/local-llama": ModelPrice(input=0.5, output=1.5)}
    assert step_cost("openai/local-llama", 1_000_000, 2_000_000, prices) == pytest.approx(3.5)
    assert step_cost("openai/local-llama", 1000, 0, {}) is None  # unknown without a price
    # A listed price wins over LiteLLM's own.
    own = step_cost(PRICED, 1000, 1000, {})
    assert own is not None and own > 0
    assert step_cost(PRICED, 1000, 1000, {PRICED: ModelPrice(input=0, output=0)}) == 0

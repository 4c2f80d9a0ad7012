"""A succeeded run saved as a verified example (POST /runs/{id}/verify), on both stacks: its
question, the code that worked, the SQL it ran on a source and its answer become an
approved `example` item of the project; a run that failed, or one saved already, is 409."""

from __future__ import annotations

from typing import Any

from tests.api.test_knowledge import actions
from tests.api.test_query import ask, finished
from tests.api.test_source_queries import TOTALS, shop  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

QUESTION = "What are the sales by region?"


def test_a_succeeded_run_is_saved_as_an_example_with_its_code_and_sql(
    alice: Api,
    shop: dict[str, Any],  # noqa: F811
    llm: ScriptedLLM,
) -> None:
    llm.script(
        code_reply("print(undefined_name)", "A first try that fails."),
        code_reply(f'df = sql("{TOTALS}", source="shop")\nprint(len(df))', "Sum in the database."),
        final_reply("'North and south, summed in the database.'"),
    )
    events = ask(alice, shop["session"]["id"], QUESTION)
    assert finished(events)["status"] == "succeeded"
    run_id = events[0].data["run_id"]

    saved = alice.post(f"/runs/{run_id}/verify")
    assert saved.status_code == 201, saved.text
    item = saved.json()
    assert (item["kind"], item["status"], item["title"]) == ("example", "approved", QUESTION)
    assert item["source_run_id"] == run_id and item["approved_by_email"] == "alice@example.com"
    body = item["body"]
    assert body.startswith(f"Question: {QUESTION}\n\nCode:\n```python\n")
    assert f'df = sql("{TOTALS}", source="shop")' in body and "undefined_name" not in body
    assert f"SQL:\n```sql\n{TOTALS};\n```" in body
    assert body.endswith("Answer: North and south, summed in the database.")
    pid = shop["project"]["id"]
    listed = alice.get(f"/projects/{pid}/knowledge", params={"kind": "example"}).json()
    assert [i["id"] for i in listed["items"]] == [item["id"]]
    assert actions(alice, pid)[0] == (
        "knowledge.created",
        f"alice@example.com added the example “{QUESTION}” to the project's knowledge "
        "(verified from a run).",
    )

    again = alice.post(f"/runs/{run_id}/verify")
    assert again.status_code == 409 and again.json()["code"] == "run_already_verified"


def test_a_run_that_failed_is_not_an_example(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    alice.patch(f"/projects/{session['project_id']}", json={"budget_tokens": 200})
    llm.script(code_reply("print(1)"), final_reply("'never reached'"))
    events = ask(alice, session["id"], "Break, please.")
    assert finished(events)["status"] == "failed"  # the budget ran out after its first step
    refused = alice.post(f"/runs/{events[0].data['run_id']}/verify")
    assert refused.status_code == 409 and refused.json()["code"] == "run_not_succeeded"
    assert refused.json()["detail"] == (
        "Only a run that succeeded can be saved as a verified example; this one ended failed."
    )
    assert alice.get(f"/projects/{session['project_id']}/knowledge").json()["total"] == 0

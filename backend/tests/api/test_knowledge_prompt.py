"""The team's knowledge reaches the agent, on both stacks: items written through the API are
in the next question's system prompt (the scripted model answers right only when it reads
them there), the run records what it was given and what it relied on, and what must not
reach a prompt (rejected or deleted items, another project's) does not; the budget names
what did not fit, and a rule always goes in."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.knowledge import service
from app.knowledge.schemas import AppliesTo
from app.models import Project
from tests.api.conftest import SALES
from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, final_reply
from tests.support.server import LiveServer

FACTOR = "Net revenue is revenue times 0.81 (after refunds and VAT)."
BLOCK = re.compile(r"<team-knowledge>\n(.*?)</team-knowledge>", re.DOTALL)


def system_prompt(messages: list[dict[str, Any]]) -> str:
    content = messages[0]["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def knowing(fact: str, right: str, wrong: str) -> Callable[[list[dict[str, Any]]], str]:
    """A model that gives the right answer (citing the fact's label) only when the fact is
    in its system prompt, and the wrong one otherwise."""

    def reply(messages: list[dict[str, Any]]) -> str:
        prompt = system_prompt(messages)
        if fact not in prompt:
            return final_reply(repr(wrong))
        label = re.search(rf"\[(K\d+)\] [a-z]+[^\n]*{re.escape(fact[:20])}", prompt)
        assert label is not None, prompt
        return final_reply(repr(f"{right} (see [{label.group(1)}])"))

    return reply


def add(api: Api, project_id: str, **item: Any) -> dict[str, Any]:
    response = api.post(f"/projects/{project_id}/knowledge", json=item)
    assert response.status_code == 201, response.text
    return dict(response.json())


def session_of(api: Api, project_id: str) -> str:
    response = api.post(f"/projects/{project_id}/sessions", json={"title": "Revenue"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def answer(api: Api, session_id: str, query: str) -> tuple[str, dict[str, Any]]:
    events = ask(api, session_id, query)
    assert finished(events)["status"] == "succeeded", finished(events)
    run = api.get(f"/runs/{events[0].data['run_id']}").json()
    return str(run["final_answer"]), run


def knowledge_block(llm: ScriptedLLM) -> str:
    """The knowledge block of the last question's system prompt ("" when there is none)."""
    prompt = system_prompt(llm.requests[-1]["messages"])
    found = BLOCK.search(prompt)
    return found.group(1) if found else ""


@pytest.fixture
def project(alice: Api) -> dict[str, Any]:
    made = alice.project()
    assert alice.upload(made["id"], "sales data.csv", SALES).status_code == 201
    return made


def test_an_approved_item_shapes_the_next_answer_and_the_run_records_it(
    alice: Api, project: dict[str, Any], llm: ScriptedLLM
) -> None:
    pid = project["id"]
    session = session_of(alice, pid)
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    before, run = answer(alice, session, "What was net revenue?")
    assert before == "Net revenue: 4,490.75" and run["knowledge"] == []
    assert "team-knowledge" not in system_prompt(llm.requests[-1]["messages"])

    item = add(alice, pid, kind="definition", title="Net revenue", body=FACTOR)
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    after, run = answer(alice, session, "What was net revenue?")
    assert after == "Net revenue: 3,627.18 (see [K1])"
    assert run["knowledge"] == [
        {"item_id": item["id"], "title": "Net revenue", "label": "K1", "used": True}
    ]
    assert knowledge_block(llm) == f"[K1] definition: Net revenue: {FACTOR}\n"

    # Given but not cited (and no identifier of it in the code): recorded, not used.
    llm.script(final_reply("'Revenue: 4,490.75'"))
    _, run = answer(alice, session, "What was net revenue?")
    assert run["knowledge"] == [
        {"item_id": item["id"], "title": "Net revenue", "label": "K1", "used": False}
    ]

    # Rejected, then deleted: the next prompts have no knowledge at all.
    assert alice.patch(f"/knowledge/{item['id']}", json={"status": "rejected"}).status_code == 200
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    rejected, run = answer(alice, session, "What was net revenue?")
    assert rejected == "Net revenue: 4,490.75" and run["knowledge"] == []
    assert alice.patch(f"/knowledge/{item['id']}", json={"status": "approved"}).status_code == 200
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    assert answer(alice, session, "What was net revenue?")[0].startswith("Net revenue: 3,627.18")
    assert alice.delete(f"/knowledge/{item['id']}").status_code == 204
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    deleted, run = answer(alice, session, "What was net revenue?")
    assert deleted == "Net revenue: 4,490.75" and run["knowledge"] == []
    assert knowledge_block(llm) == ""


def test_proposed_items_and_another_projects_never_reach_the_prompt(
    alice: Api, bob: Api, project: dict[str, Any], llm: ScriptedLLM, live: LiveServer
) -> None:
    async def propose() -> None:
        async with live.state.session_factory() as db:
            mine = await db.get(Project, uuid.UUID(project["id"]))
            assert mine is not None
            await service.create_proposed(
                db, mine, "definition", "Net revenue", FACTOR, AppliesTo(), None
            )
            await db.commit()

    live.call(propose())
    theirs = bob.project()
    add(bob, theirs["id"], kind="rule", title="Bob's rule", body=FACTOR)
    add(alice, alice.project()["id"], kind="rule", title="Alice's other rule", body=FACTOR)
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    said, run = answer(alice, session_of(alice, project["id"]), "What was net revenue?")
    assert said == "Net revenue: 4,490.75" and run["knowledge"] == []
    assert FACTOR not in system_prompt(llm.requests[-1]["messages"])


@pytest.fixture
def small_budget(live: LiveServer) -> Iterator[LiveServer]:
    """The live server giving at most 150 tokens of knowledge a question."""
    before = live.settings.KNOWLEDGE_PROMPT_TOKENS
    live.settings.KNOWLEDGE_PROMPT_TOKENS = 150
    yield live
    live.settings.KNOWLEDGE_PROMPT_TOKENS = before


def test_the_budget_names_what_did_not_fit_and_a_rule_always_goes_in(
    alice: Api, project: dict[str, Any], llm: ScriptedLLM, small_budget: LiveServer
) -> None:
    pid = project["id"]
    # A long rule (about 250 tokens, past the whole budget), and three refund definitions.
    rule = add(
        alice, pid, kind="rule", title="Money", body="Report money in euros. " + "Always. " * 120
    )
    refunds = [
        add(
            alice,
            pid,
            kind="definition",
            title=f"Refund kind {n}",
            body=f"A refund of kind {n} is counted once. " + "Refund detail. " * 20,
        )
        for n in (1, 2, 3)
    ]
    unrelated = add(alice, pid, kind="lesson", title="Weather", body="Sunny days sell ice cream.")
    llm.script(final_reply("'done [K1]'"))
    _, run = answer(alice, session_of(alice, pid), "How many refunds were there?")
    block = knowledge_block(llm)
    assert block.startswith("[K1] rule: Money: Report money in euros.")
    assert [k["item_id"] for k in run["knowledge"]] == [rule["id"]]
    assert run["knowledge"][0]["used"] is True
    named = re.search(r"Also known but not shown \(no room\): (.*)\n", block)
    assert named is not None, block
    assert sorted(named.group(1).split("; ")) == [r["title"] for r in refunds]
    assert unrelated["title"] not in block  # not relevant: neither shown nor named

    small_budget.settings.KNOWLEDGE_PROMPT_TOKENS = 2000
    llm.script(final_reply("'done'"))
    _, run = answer(alice, session_of(alice, pid), "How many refunds were there?")
    assert [k["item_id"] for k in run["knowledge"]] == [rule["id"]] + [r["id"] for r in refunds]
    assert "Also known but not shown" not in knowledge_block(llm)


def test_a_column_item_of_a_deleted_file_is_left_out(
    alice: Api, project: dict[str, Any], llm: ScriptedLLM
) -> None:
    pid = project["id"]
    other = alice.upload(pid, "refunds.csv", b"id,amount\n1,5\n")
    assert other.status_code == 201, other.text
    fid = other.json()["id"]
    add(
        alice,
        pid,
        kind="column",
        title="amount",
        body="Refund amount in cents.",
        applies_to={"file_id": fid, "table": "refunds", "column": "amount"},
    )
    llm.script(final_reply("'done'"))
    _, run = answer(alice, session_of(alice, pid), "Total refund amount?")
    assert [k["title"] for k in run["knowledge"]] == ["amount"]
    about = "file refunds.csv, table refunds, column amount"
    assert f"[K1] column ({about}): amount: Refund amount in cents.\n" in knowledge_block(llm)
    assert alice.delete(f"/files/{fid}").status_code == 204
    llm.script(final_reply("'done'"))
    _, run = answer(alice, session_of(alice, pid), "Total refund amount?")
    assert run["knowledge"] == [] and knowledge_block(llm) == ""


def test_exports_list_the_items_under_each_answer_escaped(
    alice: Api, project: dict[str, Any], llm: ScriptedLLM
) -> None:
    pid = project["id"]
    session = session_of(alice, pid)
    cited = add(alice, pid, kind="definition", title="<b>Net</b> *revenue*", body=FACTOR)
    add(alice, pid, kind="rule", title="Euros | always", body="Money is in euros.")
    llm.script(knowing(FACTOR, "Net revenue: 3,627.18", "Net revenue: 4,490.75"))
    _, run = answer(alice, session, "What was net revenue?")
    assert [(k["title"], k["used"]) for k in run["knowledge"]] == [
        ("Euros | always", False),
        (cited["title"], True),
    ]
    shaped = r"*Shaped by:* **Euros \| always**, **\<b\>Net\</b\> \*revenue\*** (relied on)"
    markdown = alice.get(f"/sessions/{session}/export", params={"format": "md"})
    assert markdown.status_code == 200 and shaped in markdown.text
    notebook = alice.get(f"/sessions/{session}/export", params={"format": "ipynb"})
    cells = [c["source"] for c in notebook.json()["cells"] if c["cell_type"] == "markdown"]
    assert any(shaped in "".join(source) for source in cells)
    report = alice.get(f"/sessions/{session}/export", params={"format": "html"})
    assert (
        '<div class="shaped">Shaped by: <strong>Euros | always</strong>, '
        "<strong>&lt;b&gt;Net&lt;/b&gt; *revenue*</strong> (relied on)</div>"
    ) in report.text

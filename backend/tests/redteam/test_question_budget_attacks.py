"""Attacks on the per-question budget of `sql()` queries (issue 40): a model that has spent
it asks the user something, and once the answer comes back (the run goes on, perhaps on
another replica) tries more queries. The budget is the question's, across the wait: they
are refused with the budget's sentence and never reach the database.

Made through the real API, sandbox and an SQLite source on both stacks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.test_asking import ask_until_waiting, follow
from tests.api.test_query import finished, of
from tests.api.test_sources import reachable  # noqa: F401
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

BUDGET = 2
SPEND = code_reply(
    "first = sql('SELECT COUNT(*) AS n FROM orders')\n"
    "second = sql('SELECT SUM(amount) AS total FROM orders')\n"
    "kind = ask_user('Net or gross?')\n",
    "Spend the budget, then ask.",
)
MORE = code_reply(
    "for n in range(3):\n"
    "    try:\n"
    "        print('ran', sql(f'SELECT {n} AS more').iloc[0, 0])\n"
    "    except Exception as exc:\n"
    "        print('refused:', exc)\n",
    "More queries after the answer.",
)
REFUSED = f"refused: this question has run its {BUDGET} queries (SOURCES_QUERIES_PER_RUN)"


@pytest.fixture
def small_budget(reachable: LiveServer) -> Iterator[LiveServer]:  # noqa: F811
    before = reachable.settings.SOURCES_QUERIES_PER_RUN
    reachable.settings.SOURCES_QUERIES_PER_RUN = BUDGET
    yield reachable
    reachable.settings.SOURCES_QUERIES_PER_RUN = before


def test_answering_the_agent_does_not_give_its_question_a_new_query_budget(
    alice: Api, llm: ScriptedLLM, small_budget: LiveServer, source_files: tuple[Path, Path]
) -> None:
    project = alice.project("Budget")
    source = alice.post(
        f"/projects/{project['id']}/sources",
        json={"name": "lite", "url": f"sqlite:///{source_files[0]}"},
    )
    assert source.status_code == 201, source.text
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "B"}).json()
    llm.script(SPEND, MORE, final_reply("'Done.'"))

    asked = ask_until_waiting(alice, session["id"], "Orders?")[-1]
    assert asked.event == "input.requested", asked
    run_id = asked.data["run_id"]
    answered = alice.post(f"/runs/{run_id}/input", json={"answer": "net"})
    assert answered.status_code == 200, answered.text
    rest = follow(alice, run_id, asked.id)
    assert finished(rest)["status"] == "succeeded", rest

    printed = "".join(e["output"] for e in of(rest, "step.output"))
    assert "ran" not in printed, printed
    assert printed.count(REFUSED) == 3, printed
    run = alice.get(f"/runs/{run_id}").json()
    ran = [q["sql"] for step in run["steps"] for q in step["queries"]]
    assert len(ran) == BUDGET and not [sql for sql in ran if "more" in sql], ran

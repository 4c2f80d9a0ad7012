"""The vote counts the key tables the attempts' code produced (issue 44, point 2): agreeing
answers computed from different tables are kept apart and the verdict says so; the same
tables, made another way (SQL or pandas, other column names, another row order) with the
answer worded differently, agree. The tables are fingerprinted in each attempt's own
worker; the run keeps what the vote compared."""

from __future__ import annotations

from typing import Any

from tests.api.attempts_script import FIRST, SECOND, THIRD, responder
from tests.api.test_query import READ, ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

QUESTION = "Which region has the most revenue?"
PANDAS = code_reply(
    f"{READ}\nby_region = df.groupby('region', as_index=False)['revenue'].sum()\nprint(by_region)"
)
SQL = code_reply(
    'import duckdb\nby_region = duckdb.sql("SELECT region, SUM(revenue) AS total FROM '
    "'sales data.csv' GROUP BY region ORDER BY total DESC\").df()\nprint(by_region)"
)
PIVOT = code_reply(
    f"{READ}\nby_region = df.pivot_table(index='region', values='revenue', aggfunc='sum')\n"
    "print(by_region)"
)
# February only: the same region on top, from other sums.
FEBRUARY = code_reply(
    f"{READ}\nby_region = df[df['month'] == '2026-02'].groupby('region', as_index=False)"
    "['revenue'].sum()\nprint(by_region)"
)


def test_the_same_answer_from_different_tables_is_not_an_agreement(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.responder = responder(
        {
            FIRST: [PANDAS, final_reply("'North'")],
            SECOND: [SQL, final_reply("'North'")],
            THIRD: [FEBRUARY, final_reply("'North'")],
        }
    )
    events = ask(alice, session["id"], QUESTION, attempts=3)
    assert finished(events)["status"] == "succeeded"
    [verdict] = of(events, "verdict")
    assert (verdict["agreement"], verdict["outcome"], verdict["chosen"]) == ("2/3", "majority", 1)
    assert [g["attempts"] for g in verdict["groups"]] == [[1, 2], [3]]
    assert verdict["reason"] == (
        "2 of 3 agree — attempt 3 (cross-check) found the same answer from a different `by_region`."
    )
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    tables = {a["attempt"]: a["tables"] for a in run["attempts"]}
    assert tables[1]["by_region"] == {"rows": 2, "width": 2, "columns": ["region", "revenue"]}
    assert tables[2]["by_region"] == {"rows": 2, "width": 2, "columns": ["region", "total"]}
    assert tables[3]["by_region"]["rows"] == 2
    assert set(tables[1]) == {"df", "by_region"}


def test_the_same_tables_with_answers_worded_differently_agree(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.responder = responder(
        {
            FIRST: [PANDAS, final_reply("'The top region is North (2,510.75).'")],
            SECOND: [SQL, final_reply("'North: 2510.75'")],
            THIRD: [PIVOT, final_reply("'North, 2510.8'")],
        }
    )
    events = ask(alice, session["id"], QUESTION, attempts=3)
    assert finished(events)["status"] == "succeeded"
    [verdict] = of(events, "verdict")
    assert (verdict["agreement"], verdict["outcome"]) == ("3/3", "agree")
    assert verdict["reason"] == "3 of 3 attempts agree."
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert all("by_region" in a["tables"] for a in run["attempts"])


def test_a_table_changed_in_place_counts_as_the_attempts_own(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    """`df` comes from the question before: no attempt assigns it, but each changes it in
    place; the one that dropped a row computed from another table."""
    llm.script(code_reply(f"{READ}\nprint(len(df))"), final_reply("len(df)"))
    assert finished(ask(alice, session["id"], "Load it"))["status"] == "succeeded"
    reordered = code_reply("df.sort_values('revenue', inplace=True)\nprint(len(df))")
    dropped = code_reply("df.drop(index=[0], inplace=True)\nprint(len(df))")
    llm.responder = responder(
        {
            FIRST: [reordered, final_reply("'North'")],
            SECOND: [reordered, final_reply("'North'")],
            THIRD: [dropped, final_reply("'North'")],
        }
    )
    events = ask(alice, session["id"], QUESTION, attempts=3)
    assert finished(events)["status"] == "succeeded"
    [verdict] = of(events, "verdict")
    assert [g["attempts"] for g in verdict["groups"]] == [[1, 2], [3]]
    assert verdict["reason"] == (
        "2 of 3 agree — attempt 3 (cross-check) found the same answer from a different `df`."
    )

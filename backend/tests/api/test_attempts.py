"""Questions asked with several attempts (issue 44): N agents at once, each in its own
worker forked from the session's state, a vote on what they computed, a judge when they
split, and the chosen attempt's state kept. The real API, sandbox and stacks; the scripted
model answers each attempt by its strategy (tests/api/attempts_script.py)."""

from __future__ import annotations

import uuid
from typing import Any

from app.attempts.spaces import space_id
from app.observability import metrics
from app.runs import snapshots
from app.runs.workspace import snapshot_marker_path, workspace_dir
from app.sandbox.snapshot_format import MANIFEST, SNAPSHOT_DIR
from tests.api.attempts_script import FIRST, SECOND, THIRD, responder
from tests.api.test_members import add
from tests.api.test_query import READ, _wait_for, ask, finished, names, of
from tests.api.test_snapshots import generation
from tests.conftest import WAIT_FOR_GO, Api
from tests.support.llm import HttpError, ScriptedLLM, Silence, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, read_into

PANDAS = code_reply(f"{READ}\ntotal = df['revenue'].sum()\nprint(total)", "Sum it.")
SQL = code_reply(
    f"{READ}\nimport duckdb\n"
    "total = duckdb.sql(\"SELECT SUM(revenue) AS t FROM 'sales data.csv'\").df()['t'][0]\n"
    "print(total)",
    "Sum it in SQL.",
)
CROSS = code_reply(f"{READ}\ntotal = float(sum(df['revenue'].tolist()))\nprint(total)")
QUESTION = "What is the total revenue?"


def ask_attempts(api: Api, session_id: str, count: int | None, **body: Any) -> list[Event]:
    extra = {} if count is None else {"attempts": count}
    return ask(api, session_id, QUESTION, **extra, **body)


def by_attempt(events: list[Event], name: str) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = {}
    for data in of(events, name):
        found.setdefault(data["attempt"], []).append(data)
    return found


def test_three_attempts_that_agree_give_one_answer_with_a_3_of_3_verdict(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.responder = responder(
        {
            FIRST: [PANDAS, final_reply("f'Total revenue is {total:,.2f}.'")],
            SECOND: [SQL, final_reply("f'The revenue totals {total}'")],
            THIRD: [CROSS, final_reply("round(total, 1)")],
        }
    )
    events = ask_attempts(alice, session["id"], 3)
    assert finished(events)["status"] == "succeeded", events[-1].data
    started = of(events, "attempt.started")
    assert [(s["attempt"], s["strategy"]) for s in started] == [
        (1, FIRST),
        (2, SECOND),
        (3, THIRD),
    ]
    # Each attempt streamed its own steps, marked with its number.
    assert sorted(by_attempt(events, "step.code")) == [1, 2, 3]
    assert all("attempt" in e.data for e in events if e.event.startswith("step."))
    outputs = {n: o[0]["output"].strip() for n, o in by_attempt(events, "step.output").items()}
    assert outputs == {1: "4490.75", 2: "4490.75", 3: "4490.75"}, [
        str(e.data) for e in events if e.event == "step.error"
    ]
    assert outputs == {1: "4490.75", 2: "4490.75", 3: "4490.75"}
    done = of(events, "attempt.finished")
    assert sorted((d["attempt"], d["status"]) for d in done) == [
        (1, "succeeded"),
        (2, "succeeded"),
        (3, "succeeded"),
    ]
    [verdict] = of(events, "verdict")
    assert verdict["agreement"] == "3/3" and verdict["outcome"] == "agree"
    assert verdict["chosen"] == 1 and verdict["reason"] == "3 of 3 attempts agree."
    assert [g["attempts"] for g in verdict["groups"]] == [[1, 2, 3]]
    answers = of(events, "final")
    assert answers[-1] == {
        "run_id": answers[-1]["run_id"],
        "seq": answers[-1]["seq"],
        "attempt": 1,
        "answer": "Total revenue is 4,490.75.",
    }
    assert names(events).index("verdict") < len(events) - 2  # then final, run.finished

    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["final_answer"] == "Total revenue is 4,490.75."
    assert run["verdict"]["outcome"] == "agree"
    assert [(a["attempt"], a["status"], a["strategy"]) for a in run["attempts"]] == [
        (1, "succeeded", FIRST),
        (2, "succeeded", SECOND),
        (3, "succeeded", THIRD),
    ]
    assert all(a["tokens_in"] > 0 and a["tokens_out"] > 0 for a in run["attempts"])
    assert run["tokens_in"] == sum(a["tokens_in"] for a in run["attempts"])
    # The chosen attempt's steps are the run's 1, 2; the others' are kept apart.
    chosen = [s for s in run["steps"] if s["attempt"] == 1]
    assert [s["index"] for s in chosen] == [1, 2]
    assert {s["attempt"] for s in run["steps"]} == {1, 2, 3}


DISSENT_SCRIPTS = {
    FIRST: [PANDAS, final_reply("f'Total revenue is {total}.'")],
    SECOND: [SQL, final_reply("f'{total:.2f}'")],
    THIRD: [
        code_reply(f"{READ}\ntotal = df['revenue'].sum() + 321.25\nprint(total)"),
        final_reply("f'Total revenue is {total:,.2f} including refunds.'"),
    ],
}


def test_a_dissent_loses_to_the_majority_and_the_verdict_names_it(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    project_id = alice.get(f"/sessions/{session['id']}").json()["project_id"]
    patched = alice.patch(f"/projects/{project_id}", json={"default_attempts": 3})
    assert patched.status_code == 200 and patched.json()["default_attempts"] == 3
    script = responder(
        DISSENT_SCRIPTS,
        dissent=['{"3": "because it kept refunded orders in the sum."}'],
    )
    llm.responder = script
    events = ask_attempts(alice, session["id"], None)  # the project's default: 3
    assert finished(events)["status"] == "succeeded"
    [verdict] = of(events, "verdict")
    assert (verdict["agreement"], verdict["outcome"], verdict["chosen"]) == ("2/3", "majority", 1)
    assert [g["attempts"] for g in verdict["groups"]] == [[1, 2], [3]]
    # The critic read the majority's code and the dissent's once, and said why they differ.
    assert verdict["reason"] == (
        "2 of 3 agree — attempt 3 (cross-check) found Total revenue is 4,812.00 including "
        "refunds because it kept refunded orders in the sum."
    )
    [asked] = script.dissent_prompts
    assert "df['revenue'].sum() + 321.25" in asked and "SUM(revenue)" not in asked
    assert "Answer: Total revenue is 4490.75." in asked
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["verdict"]["reason"] == verdict["reason"]
    # Its tokens count in the run's (and so against the budgets).
    assert run["tokens_in"] > sum(a["tokens_in"] for a in run["attempts"])
    assert of(events, "final")[-1]["answer"] == "Total revenue is 4490.75."

    # The exports hold the chosen attempt's steps and the verdict, in words.
    path = f"/sessions/{session['id']}/export"
    report = alice.get(path, params={"format": "html"})
    assert report.status_code == 200, report.text
    assert "Attempts: 2 of 3 agree — attempt 3 (cross-check) found" in report.text
    notebook = alice.get(path, params={"format": "ipynb"}).text
    assert "2 of 3 agree" in notebook
    assert "321.25" not in notebook and "321.25" not in report.text
    assert notebook.count("total = df['revenue'].sum()") == 1


def test_a_failing_explainer_still_gives_the_majoritys_verdict(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    script = responder(DISSENT_SCRIPTS, dissent=[HttpError(500, "the critic is down")] * 5)
    llm.responder = script
    events = ask_attempts(alice, session["id"], 3)
    assert finished(events)["status"] == "succeeded"
    assert script.dissent_prompts  # it was asked
    [verdict] = of(events, "verdict")
    assert (verdict["agreement"], verdict["outcome"], verdict["chosen"]) == ("2/3", "majority", 1)
    assert verdict["reason"] == (
        "2 of 3 agree — attempt 3 (cross-check) found Total revenue is 4,812.00 including refunds."
    )
    assert of(events, "final")[-1]["answer"] == "Total revenue is 4490.75."


def test_attempts_that_all_differ_are_judged_and_the_reasons_kept(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    script = responder(
        {
            FIRST: [PANDAS, final_reply("'4490.75'")],
            SECOND: [SQL, final_reply("'4000'")],
            THIRD: [CROSS, final_reply("'12'")],
        },
        judge=[
            '{"better": "B", "reason": "A left out the February rows."}',
            '{"better": "A", "reason": "B counted rows instead of summing."}',
        ],
    )
    llm.responder = script
    events = ask_attempts(alice, session["id"], 3)
    assert finished(events)["status"] == "succeeded"
    [verdict] = of(events, "verdict")
    assert (verdict["agreement"], verdict["outcome"]) == ("1/3", "judged")
    # The largest groups first, each of one: 1, 2, 3; 1 met 2 (2 won), then 2 met 3.
    assert verdict["chosen"] == 2
    assert "A left out the February rows." in verdict["reason"]
    assert len(script.judge_prompts) == 2
    assert "4490.75" in script.judge_prompts[0] and "SUM(revenue)" in script.judge_prompts[0]
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["final_answer"] == "4000"
    assert run["verdict"]["outcome"] == "judged" and run["verdict"]["chosen"] == 2
    assert run["verdict"]["judgements"] == [
        {"pair": [1, 2], "pick": 2, "reason": "A left out the February rows."},
        {"pair": [2, 3], "pick": 2, "reason": "B counted rows instead of summing."},
    ]


def test_a_crashing_and_a_silent_attempt_leave_the_other_to_answer(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.responder = responder(
        {
            FIRST: [PANDAS, final_reply("'4490.75'")],
            SECOND: [HttpError(500, "the model server fell over")],
            THIRD: [Silence(7)],  # past LLM_TIMEOUT_SECONDS (5)
        }
    )
    events = ask_attempts(alice, session["id"], 3)
    assert finished(events)["status"] == "succeeded"
    done = {d["attempt"]: d for d in of(events, "attempt.finished")}
    assert done[1]["status"] == "succeeded" and done[1]["answer"] == "4490.75"
    assert done[2]["status"] == "failed" and done[3]["status"] == "failed"
    [verdict] = of(events, "verdict")
    assert (verdict["outcome"], verdict["chosen"], verdict["agreement"]) == ("undecided", 1, "1/3")
    assert "Attempt 2 did not answer" in verdict["reason"]
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    errors = {a["attempt"]: a["error"] for a in run["attempts"]}
    assert errors[1] is None and errors[2] and errors[3]


def test_cancel_stops_every_attempt(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    held = code_reply(WAIT_FOR_GO)
    llm.responder = responder({s: [held, final_reply("'x'")] for s in (FIRST, SECOND, THIRD)})
    seen: list[Event] = []
    import threading

    def read() -> None:
        with alice.stream(
            "POST", f"/sessions/{session['id']}/query", json={"query": QUESTION, "attempts": 3}
        ) as response:
            read_into(response, seen)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    _wait_for(lambda: len({e.data.get("attempt") for e in seen if e.event == "step.code"}) == 3, 60)
    run_id = seen[0].data["run_id"]
    cancelled = alice.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    thread.join(60)
    assert finished(seen)["status"] == "cancelled"
    assert sorted(d["status"] for d in of(seen, "attempt.finished")) == ["cancelled"] * 3
    assert "verdict" not in names(seen)
    # Every attempt's space is gone; the session takes questions again.
    for n in (1, 2, 3):
        space = workspace_dir(long_steps.settings.DATA_DIR, space_id(uuid.UUID(run_id), n))
        assert not space.exists()
    llm.responder = None
    llm.script(final_reply("'again'"))
    assert finished(ask(alice, session["id"], "Again?"))["status"] == "succeeded"


def test_a_follow_up_sees_the_chosen_attempts_variables_and_files_only(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: LiveServer
) -> None:
    llm.script(code_reply("before = 'from the first question'\nprint(before)"), final_reply("1"))
    assert finished(ask(alice, session["id"], "Set up"))["status"] == "succeeded"
    llm.responder = responder(
        {
            FIRST: [
                code_reply(
                    f"{READ}\nprint(before)\nway = 'pandas'\ntotal = df['revenue'].sum()\n"
                    "pd.DataFrame({'t': [total]}).to_csv('chosen.csv', index=False)"
                ),
                final_reply("total"),
            ],
            SECOND: [
                code_reply(f"{READ}\nprint(before)\nway = 'sql'\ntotal = df['revenue'].sum()"),
                final_reply("total"),
            ],
            THIRD: [
                code_reply(
                    f"{READ}\nprint(before)\nonly_in_three = 1\ntotal = 1.0\n"
                    "pd.DataFrame({'t': [1]}).to_csv('dissent.csv', index=False)"
                ),
                final_reply("total"),
            ],
        }
    )
    events = ask_attempts(alice, session["id"], 3)
    assert finished(events)["status"] == "succeeded"
    # Every attempt began from the session's variables.
    assert {o[0]["output"].strip() for o in by_attempt(events, "step.output").values()} == {
        "from the first question"
    }
    assert of(events, "verdict")[0]["chosen"] == 1
    folder = workspace_dir(live.settings.DATA_DIR, uuid.UUID(session["id"]))
    assert (folder / "chosen.csv").exists() and not (folder / "dissent.csv").exists()
    # The chosen attempt's snapshot was moved into the session's folder: the follow-up
    # restarts the session's worker from it, with nothing to fetch from storage.
    marker = snapshot_marker_path(live.settings.DATA_DIR, uuid.UUID(session["id"]))
    assert snapshots.held(marker) == generation(live, session["id"])
    assert (folder / SNAPSHOT_DIR / MANIFEST).is_file()
    downloads = _count(metrics.SNAPSHOT_SECONDS, "download")

    llm.responder = None
    llm.script(
        code_reply(
            "print(way, before)\n"
            "try:\n    print(only_in_three)\nexcept Exception:\n    print('absent')\n"
            "print(pd.read_csv('chosen.csv')['t'][0])\n"
            "try:\n    print(_wb_found)\nexcept Exception:\n    print('no fingerprints')"
        ),
        final_reply("way"),
    )
    follow_up = ask(alice, session["id"], "Which way?")
    assert finished(follow_up)["status"] == "succeeded"
    printed = of(follow_up, "step.output")[0]["output"].split("\n")
    assert _count(metrics.SNAPSHOT_SECONDS, "download") == downloads
    # The chosen attempt's own variables, not the names its tables were fingerprinted with.
    assert printed[:4] == [
        "pandas from the first question",
        "absent",
        "4490.75",
        "no fingerprints",
    ]


def test_attempts_beyond_the_pools_bound_wait_and_the_chosen_keeps_its_state(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: LiveServer
) -> None:
    """Two slots for three attempts: the third waits for one, so an attempt that answered
    gives its slot up (its variables written first) rather than hold it until the vote;
    the one chosen is such an attempt, and its variables are the session's after it."""
    pool = live.state.sandboxes
    bound = pool.max_workers
    pool.max_workers = 2
    way = "{READ}\nway = '{name}'\ntotal = df['revenue'].sum(){extra}\nprint(total)"
    llm.responder = responder(
        {
            FIRST: [
                code_reply(way.format(READ=READ, name="pandas", extra=" + 1")),
                final_reply("total"),
            ],
            SECOND: [code_reply(way.format(READ=READ, name="sql", extra="")), final_reply("total")],
            THIRD: [
                code_reply(way.format(READ=READ, name="cross", extra="")),
                final_reply("total"),
            ],
        },
        dissent=['{"1": "because it added one."}'],
    )
    try:
        events = ask_attempts(alice, session["id"], 3)
    finally:
        pool.max_workers = bound
    assert finished(events)["status"] == "succeeded", events[-1].data
    [verdict] = of(events, "verdict")
    assert (verdict["agreement"], verdict["chosen"]) == ("2/3", 2), verdict
    llm.responder = None
    llm.script(code_reply("print(way, total)"), final_reply("way"))
    follow_up = ask(alice, session["id"], "Which way?")
    assert finished(follow_up)["status"] == "succeeded"
    assert of(follow_up, "step.output")[0]["output"].strip() == "sql 4490.75"


def _count(histogram: Any, operation: str) -> float:
    """How many times the app observed this operation (its in-process metrics)."""
    return sum(
        sample.value
        for family in histogram.collect()
        for sample in family.samples
        if sample.name.endswith("_count") and sample.labels.get("operation") == operation
    )


def test_one_attempt_is_a_question_as_before(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(PANDAS, final_reply("total"))
    events = ask_attempts(alice, session["id"], 1)
    assert finished(events)["status"] == "succeeded"
    assert not any(e.event.startswith("attempt.") or e.event == "verdict" for e in events)
    assert not any("attempt" in e.data for e in events)
    run = alice.get(f"/runs/{events[0].data['run_id']}").json()
    assert run["attempts"] is None and run["verdict"] is None
    assert [(s["index"], s["attempt"]) for s in run["steps"]] == [(1, None), (2, None)]


def test_bad_attempts_viewers_and_budgets_are_refused(
    alice: Api, bob: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    for bad in (0, 6, "many"):
        refused = alice.post(
            f"/sessions/{session['id']}/query", json={"query": QUESTION, "attempts": bad}
        )
        assert refused.status_code == 422, refused.text
    project_id = alice.get(f"/sessions/{session['id']}").json()["project_id"]
    project = alice.get(f"/projects/{project_id}")
    assert alice.patch(f"/projects/{project_id}", json={"default_attempts": 6}).status_code == 422
    add(alice, project.json(), "bob@example.com", "viewer")
    viewer = bob.post(f"/sessions/{session['id']}/query", json={"query": QUESTION, "attempts": 3})
    assert viewer.status_code == 403, viewer.text
    assert bob.patch(f"/projects/{project_id}", json={"default_attempts": 2}).status_code == 403

    # One question spends some tokens; the budget leaves room for two more, not three.
    llm.script(PANDAS, final_reply("total"))
    assert finished(ask_attempts(alice, session["id"], 1))["status"] == "succeeded"
    spent = alice.get(f"/projects/{project_id}").json()
    used = spent["tokens_in"] + spent["tokens_out"]
    budget = alice.patch(f"/projects/{project_id}", json={"budget_tokens": used * 3 + 10})
    assert budget.status_code == 200, budget.text
    refused = alice.post(
        f"/sessions/{session['id']}/query", json={"query": QUESTION, "attempts": 3}
    )
    assert refused.status_code == 403, refused.text
    body = refused.json()
    assert body["code"] == "budget_exceeded"
    assert body["detail"].startswith(f"3 attempts would use about {used * 3:,} tokens")
    assert alice.get(f"/sessions/{session['id']}/runs").json()["total"] == 1  # nothing ran

"""Cells (issue 42, point 12), end to end on both stacks: a member runs their own Python in
the session's sandbox, or SQL on a project source, with no model; the run (kind `cell`)
streams a question's events without model events, joins the history and the exports, and
the agent reads it on the next question (the scripted LLM's request shows it)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from tests.api.test_query import _wait_for, ask, finished, names, of
from tests.api.test_sources import reachable  # noqa: F401  (a fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, collect, read_into

MODEL_EVENTS = {"model.delta", "plan", "verification", "final", "approval.requested"}


def run_cell(api: Api, session_id: str, code: str, **body: Any) -> list[Event]:
    with api.stream(
        "POST",
        f"/sessions/{session_id}/cells",
        json={"language": body.pop("language", "python"), "code": code, **body},
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return collect(response)


def printed(events: list[Event]) -> str:
    return "".join(e["output"] for e in of(events, "step.output"))


def test_a_python_cell_runs_in_the_sessions_sandbox_and_the_agent_sees_it(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(
        code_reply(
            "import pandas as pd\nsales = pd.read_csv('sales data.csv')\nprint(len(sales))",
            "Read the sales.",
        ),
        final_reply("'Four rows.'"),
    )
    asked = ask(alice, session["id"], "How many rows?")
    assert finished(asked)["status"] == "succeeded"
    requests_before = len(llm.requests)

    code = (
        "import plotly.express as px\n"
        "by_region = sales.groupby('region', as_index=False)['revenue'].sum()\n"
        "print('regions:', ', '.join(by_region['region']))\n"
        "fig = px.bar(by_region, x='region', y='revenue', title='Revenue by region')\n"
        "fig.show()"
    )
    events = run_cell(alice, session["id"], code)
    assert len(llm.requests) == requests_before  # no model was called
    assert finished(events)["status"] == "succeeded"
    assert not MODEL_EVENTS & set(names(events)), names(events)
    started = events[0]
    assert started.event == "run.started" and started.data["query"] == code
    assert names(events)[-1] == "run.finished"
    assert {"step.started", "step.code", "step.output", "artifact", "step.finished"} <= set(
        names(events)
    )
    # The agent's variable `sales` was there: the same worker, the same variables.
    assert "regions: North, South" in printed(events)
    [artifact] = of(events, "artifact")
    assert artifact["artifact"]["kind"] == "plotly"
    assert [c["code"] for c in of(events, "step.code")] == [code]

    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert [r["kind"] for r in runs] == ["question", "cell"]
    cell = runs[1]
    assert cell["cell"] == {"language": "python", "source": None, "variable": None}
    assert cell["steps"][0]["code"] == code and "regions:" in cell["steps"][0]["output"]
    assert cell["final_answer"] is None and cell["tokens_in"] == 0
    assert [a["kind"] for a in cell["artifacts"]] == ["plotly"]

    # The cell's variable is there for the agent, which reads the cell in its history.
    llm.script(
        code_reply("print(by_region['revenue'].max())", "Use the cell's table."),
        final_reply("'North leads.'"),
    )
    follow = ask(alice, session["id"], "Which region leads?")
    assert finished(follow)["status"] == "succeeded", of(follow, "step.error")
    assert printed(follow).strip() == "2510.75"
    prompt = llm.prompts()[0]
    assert "The user ran a Python cell" in prompt
    assert "by_region = sales.groupby" in prompt and "regions: North, South" in prompt

    # Exported as a code cell of the notebook, and in the report and markdown.
    notebook = json.loads(
        alice.get(f"/sessions/{session['id']}/export", params={"format": "ipynb"}).text
    )
    sources = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert any("by_region = sales.groupby" in s for s in sources), sources
    for kind in ("md", "html"):
        exported = alice.get(f"/sessions/{session['id']}/export", params={"format": kind})
        assert exported.status_code == 200 and "by_region = sales.groupby" in exported.text
        assert "Python cell" in exported.text and "no model" in exported.text
        # A cell that ran is not reported as unfinished or failed for having no answer.
        assert "Not finished when exported" not in exported.text
        assert "The run failed" not in exported.text


def test_an_sql_cell_queries_a_source_and_keeps_its_result_as_a_variable(
    alice: Api,
    llm: ScriptedLLM,
    reachable: LiveServer,  # noqa: F811
    source_files: tuple[Path, Path],
) -> None:
    project = alice.project("Shop")
    source = alice.post(
        f"/projects/{project['id']}/sources",
        json={"name": "lite", "url": f"sqlite:///{source_files[0]}"},
    )
    assert source.status_code == 201, source.text
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    sql = "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region"

    events = run_cell(alice, session["id"], sql, language="sql", source="lite")
    assert finished(events)["status"] == "succeeded", of(events, "step.error")
    assert "rows, kept as df_sql_1" in printed(events)
    [artifact] = [a for a in of(events, "artifact") if a["artifact"]["kind"] == "table"]
    table = alice.get(f"/artifacts/{artifact['artifact']['id']}/content").json()
    assert table["rows"] == [["north", 50], ["south", 50]]
    [queries] = of(events, "step.queries")
    assert [q["sql"] for q in queries["queries"]] == [sql]
    [code] = of(events, "step.code")
    assert (
        code["code"].startswith('df_sql_1 = sql("""SELECT region')
        and "source='lite'" in (code["code"])
    )

    # By id, and into a name of the user's; then Python reads it.
    named = run_cell(
        alice,
        session["id"],
        "-- into: regions\nSELECT DISTINCT region FROM orders",
        language="sql",
        source=source.json()["id"],
    )
    assert finished(named)["status"] == "succeeded"
    assert "kept as regions" in printed(named)
    python = run_cell(alice, session["id"], "print(sorted(regions['region']), len(df_sql_1))")
    assert printed(python).strip() == "['north', 'south'] 2"

    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert runs[0]["cell"] == {"language": "sql", "source": "lite", "variable": "df_sql_1"}
    notebook = alice.get(f"/sessions/{session['id']}/export", params={"format": "ipynb"}).text
    assert "df_sql_1 = sql(" in notebook and "lite" in notebook
    markdown = alice.get(f"/sessions/{session['id']}/export", params={"format": "md"}).text
    assert "## 1. SQL cell on lite" in markdown

    # Refusals: no source, an unknown one, a bad name.
    for body, code_ in [
        ({"language": "sql", "code": sql}, "source_required"),
        ({"language": "sql", "code": sql, "source": "nope"}, "unknown_source"),
        ({"language": "sql", "code": "-- into: 1x\nSELECT 1", "source": "lite"}, "bad_cell"),
    ]:
        refused = alice.post(f"/sessions/{session['id']}/cells", json=body)
        assert refused.status_code == 400 and refused.json()["code"] == code_, refused.text


def test_a_python_cell_shows_its_last_expression_as_a_notebook_does(
    alice: Api, session: dict[str, Any]
) -> None:
    code = "import pandas as pd\nsales = pd.read_csv('sales data.csv')\nsales.head(2)"
    events = run_cell(alice, session["id"], code)
    assert finished(events)["status"] == "succeeded", of(events, "step.error")
    # A DataFrame last: a table of its rows, without print or display.
    [table] = [a["artifact"] for a in of(events, "artifact") if a["artifact"]["kind"] == "table"]
    content = alice.get(f"/artifacts/{table['id']}/content").json()
    assert len(content["rows"]) == 2 and "region" in content["columns"]
    # The step shows the code as written.
    assert [c["code"] for c in of(events, "step.code")] == [code]

    # Anything else: its repr, once; the variables are the session's.
    shown = run_cell(alice, session["id"], "total = len(sales)\n{'rows': total}")
    assert printed(shown).strip() == "{'rows': 4}"
    assert not of(shown, "artifact")
    # A last line that is no expression, a value of None, or a `;` shows nothing more.
    for quiet in ("x = sales.head()", "print('once')", "sales.head();", "None"):
        events = run_cell(alice, session["id"], quiet)
        assert finished(events)["status"] == "succeeded", quiet
        assert printed(events).strip() == ("once" if "print" in quiet else ""), quiet
        assert not of(events, "artifact"), quiet
    # The value is not kept as a variable of the session.
    kept = finished(run_cell(alice, session["id"], "print(_cell_value)"))
    assert kept["status"] == "failed" and "_cell_value" in kept["error"]


def test_a_failing_cell_fails_its_run_with_the_error_and_the_session_goes_on(
    alice: Api, session: dict[str, Any]
) -> None:
    events = run_cell(alice, session["id"], "x = 1\nprint(undefined_name)")
    end = finished(events)
    assert end["status"] == "failed" and "undefined_name" in end["error"]
    [error] = of(events, "step.error")
    assert "undefined_name" in error["error"]
    assert finished(run_cell(alice, session["id"], "print(x + 1)"))["status"] == "succeeded"


def test_viewers_cannot_run_cells_and_others_do_not_find_the_session(
    alice: Api, bob: Api, session: dict[str, Any]
) -> None:
    path = f"/sessions/{session['id']}/cells"
    body = {"language": "python", "code": "print(1)"}
    assert bob.post(path, json=body).status_code == 404
    project_id = session["project_id"]
    added = alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert added.status_code == 201, added.text
    refused = bob.post(path, json=body)
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden_role"
    assert alice.post(path, json={"language": "r", "code": "1"}).status_code == 422
    assert alice.post(path, json={"language": "python", "code": ""}).status_code == 422


def test_a_busy_session_refuses_a_cell_and_a_running_cell_can_be_stopped(
    alice: Api, session: dict[str, Any], long_steps: LiveServer
) -> None:
    seen: list[Event] = []
    code = "import time\nprint('working')\ntime.sleep(3600)\nprint('never')"

    def read() -> None:
        with alice.stream(
            "POST",
            f"/sessions/{session['id']}/cells",
            json={"language": "python", "code": code},
        ) as response:
            read_into(response, seen)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    _wait_for(lambda: any(e.event == "step.output" for e in seen))
    busy = alice.post(
        f"/sessions/{session['id']}/cells", json={"language": "python", "code": "print(2)"}
    )
    assert busy.status_code == 409 and busy.json()["code"] == "session_busy"
    run_id = seen[0].data["run_id"]
    cancelled = alice.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    thread.join(30)
    assert finished(seen)["status"] == "cancelled"
    assert [e["error"] for e in of(seen, "step.error")] == ["Stopped by the user."]
    assert "never" not in printed(seen)
    after = run_cell(alice, session["id"], "print('again')")
    assert printed(after).strip() == "again"


def test_a_question_is_a_run_of_kind_question(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(final_reply("'hi'"))
    run_id = ask(alice, session["id"], "Hello")[0].data["run_id"]
    run = alice.get(f"/runs/{run_id}").json()
    assert run["kind"] == "question" and run["cell"] is None

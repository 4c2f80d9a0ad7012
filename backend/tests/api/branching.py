"""What the branch tests share: a three-question session whose questions each change the
variables (a DataFrame, a dict, and one that the third question deletes), and helpers."""

from __future__ import annotations

from typing import Any

from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

Q1 = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\nconfig = {'k': 1}\ngone = 'here'"
Q2 = "df['b'] = df['a'] * 10\nconfig['k'] = 2\nprint('q2 ran')"
Q3 = "del gone\ndf = df.drop(columns=['a'])\nconfig['k'] = 3"
# What a branch's first step prints: the variables as that point left them.
SHOW = (
    "print('df', df.to_dict('list'))\nprint('config', config)\n"
    "try:\n    print('gone', gone)\nexcept NameError:\n    print('gone', 'missing')"
)
AFTER = {
    1: ("df {'a': [1, 2]}", "config {'k': 1}", "gone here"),
    2: ("df {'a': [1, 2], 'b': [10, 20]}", "config {'k': 2}", "gone here"),
    3: ("df {'b': [10, 20]}", "config {'k': 3}", "gone missing"),
}


def new_session(api: Api, title: str = "Sales") -> dict[str, Any]:
    project = api.project(title)
    response = api.post(f"/projects/{project['id']}/sessions", json={"title": title})
    assert response.status_code == 201, response.text
    return dict(response.json())


def answered(api: Api, session_id: str, llm: ScriptedLLM, code: str, answer: str) -> list[Any]:
    """Ask a question whose one step runs `code`; its events (it must succeed)."""
    llm.script(code_reply(code), final_reply(repr(answer)))
    events = ask(api, session_id, f"Question answered by {answer}")
    assert finished(events)["status"] == "succeeded", events
    return events


def three_questions(api: Api, llm: ScriptedLLM) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session and its three runs (each question changed the variables)."""
    session = new_session(api)
    for number, code in enumerate((Q1, Q2, Q3), start=1):
        answered(api, session["id"], llm, code, f"A{number}")
    runs = api.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert [r["final_answer"] for r in runs] == ["A1", "A2", "A3"]
    return session, runs


def branch(api: Api, session_id: str, run_id: str) -> dict[str, Any]:
    response = api.post(f"/sessions/{session_id}/branch", json={"after_run_id": run_id})
    assert response.status_code == 201, response.text
    return dict(response.json())


def shown(api: Api, session_id: str, llm: ScriptedLLM) -> tuple[str, list[Any]]:
    """What the session's next question's first step printed of the variables."""
    events = answered(api, session_id, llm, SHOW, "shown")
    return "".join(o["output"] for o in of(events, "step.output")), events


def sees(output: str, point: int) -> None:
    for line in AFTER[point]:
        assert line in output, (point, output)

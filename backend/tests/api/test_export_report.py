"""The report to send, and how exports sum a run up: the runs chosen (those that succeeded
by default), the title whole, the check of the answer in words, numbers written for
reading, the files the code wrote attached, a file name made from the title; and run
summaries that call an error fixed only when a later step worked, and a stop a stop."""

from __future__ import annotations

import base64
import importlib
import json
import re
from typing import Any

import httpx
import pytest

from tests.api.test_export import exported
from tests.api.test_plans_and_checks import agent_settings, verdict
from tests.api.test_query import READ, _start_in_background, _wait_for, ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import collect

QUESTION = (
    "What is the average revenue per day by region in sales data.csv? "
    "Save the table as by_region.csv"
)
BY_REGION = code_reply(
    f"{READ}\nby_region = df.groupby('region', as_index=False)['revenue'].mean()\n"
    "by_region['per_day'] = by_region['revenue'] / 19\n"
    "by_region['total_cents'] = df.groupby('region')['revenue'].sum().values * 100\n"
    "by_region.to_csv('by_region.csv', index=False)\n"
    "pd.DataFrame({'note': ['<script>alert(1)</script>']}).to_html('notes.html', escape=False)\n"
    "display(by_region)"
)
# The module (app.sessions.export.gather is also the name of its function).
gathering = importlib.import_module("app.sessions.export.gather")
ANSWER = "Per day: North 66.07, South 52.11 (the table is in by_region.csv)."


@pytest.fixture
def three_runs(alice: Api, session, llm: ScriptedLLM, live: LiveServer) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """A session titled, as the browser names it, with its first question cut short; one
    run that succeeded (its answer checked), one that failed at every step, one stopped."""
    cut = QUESTION[:57].rstrip() + "…"
    assert alice.patch(f"/sessions/{session['id']}", json={"title": cut}).status_code == 200
    llm.script(BY_REGION, final_reply(repr(ANSWER)), verdict("approve", "It states the table."))
    with agent_settings(live, AGENT_VERIFY_ROUNDS=1):
        assert finished(ask(alice, session["id"], QUESTION))["status"] == "succeeded"
    llm.script(*[code_reply("print(df['margin'].sum())")] * 4)
    assert finished(ask(alice, session["id"], "What is the margin?"))["status"] == "failed"
    llm.script(code_reply("import time\nprint('working')\ntime.sleep(3)"), final_reply("'x'"))
    thread, seen = _start_in_background(alice, session["id"], "Slow question")
    _wait_for(lambda: any(e.event == "step.code" for e in seen))
    assert alice.post(f"/runs/{seen[0].data['run_id']}/cancel").status_code == 200
    thread.join(10)
    assert finished(seen)["status"] == "cancelled"
    runs = alice.get(f"/sessions/{session['id']}/runs").json()
    return {"session": session, "runs": runs["items"] if isinstance(runs, dict) else runs}


def test_the_report_shows_the_runs_that_succeeded_ready_to_send(
    alice: Api, three_runs: dict[str, Any]
) -> None:
    session, runs = three_runs["session"], three_runs["runs"]
    body, headers = exported(alice, session["id"], "html")
    page = body.decode()
    # Named after the whole title, in safe characters, nothing cut with "…".
    name = "What is the average revenue per day by region in sales data.csv Save the table.html"
    assert headers["content-disposition"].startswith(f'attachment; filename="{name}"')
    assert "…" not in page.split("</header>")[0]
    # The title is the first question: it reads once, as the question; the project heads it.
    assert page.split("<body>", 1)[1].count(QUESTION) == 1 and f"</span>{QUESTION}</h2>" in page
    # Only the run that succeeded, by default; the header says how many of all.
    assert "What is the margin?" not in page and "Slow question" not in page
    assert "1 of 3 questions · files read: <code>sales data.csv</code>" in page
    # The check in words; numbers for reading, right-aligned.
    assert '<div class="check approve">Checked: It states the table.</div>' in page
    assert "Check of the answer" not in page and "approve —" not in page
    assert '<td>North</td><td class="num">1,255.38</td><td class="num">66.07</td>' in page
    assert '<td class="num">251,075</td>' in page
    assert "65.9278" not in page and "66.0723684" not in page
    # The file the answer names travels inside, as a download (never shown or run).
    link = re.search(
        r'<a download="by_region.csv" href="data:application/octet-stream;base64,([^"]+)">', page
    )
    assert link, page[-3000:]
    artifact = next(a for a in runs[0]["artifacts"] if a["name"] == "by_region.csv")
    content = alice.get(f"/artifacts/{artifact['id']}/content").content
    assert base64.b64decode(link.group(1)) == content
    assert content.startswith(b"region,revenue,per_day,total_cents\nNorth,1255.375,")
    # A file the code wrote travels as bytes to save, never as markup the report runs.
    assert '<a download="notes.html" href="data:application/octet-stream;base64,' in page
    assert "<script>alert(1)" not in page
    # The report's protections hold: its own policy, no source but data: URIs.
    assert "default-src 'none'; script-src 'nonce-" in page
    markup = re.sub(r"<script nonce=[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.findall(r"""(?:src|href)=["'](?!data:|#)""", markup)


def test_the_user_chooses_the_runs_and_summaries_say_what_happened(
    alice: Api, three_runs: dict[str, Any]
) -> None:
    session, runs = three_runs["session"], three_runs["runs"]
    chosen = f"{runs[1]['id']},{runs[2]['id']}"
    response = alice.get(
        f"/sessions/{session['id']}/export", params={"format": "html", "runs": chosen}
    )
    assert response.status_code == 200, response.text
    page = response.text
    assert QUESTION not in page.split("</header>")[1] and "2 of 3 questions" in page
    failed, stopped = page.split('<section class="run"')[1:]
    # Four steps failed and none worked after: nothing was fixed.
    assert "How it was worked out: 4 steps · 4 errors</summary>" in failed
    assert "fixed" not in failed
    # A stop is a stop, not an error nor a failure.
    assert "Stopped by the user before it had an answer." in stopped
    assert "The run failed" not in stopped and "error" not in stopped.split("<details>")[0]
    assert '<span class="status cancelled">stopped</span>' in stopped
    assert re.search(r"How it was worked out: 1 step · stopped</summary>", stopped)

    # The Markdown (every run by default) says the same.
    text = exported(alice, session["id"], "md")[0].decode()
    assert "*2 steps · 1 fixed error*" not in text  # the first run's summary is just steps
    assert "*2 steps*" in text and "*4 steps · 4 errors*" in text
    assert "*Stopped by the user before it had an answer.*\n\n*1 step · stopped*" in text
    assert "*Checked: It states the table.*" in text


def test_a_file_too_large_to_attach_is_named_and_left_in_the_workbench(
    alice: Api, three_runs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gathering, "ATTACH_FILE_BYTES", 16)
    page = exported(alice, three_runs["session"]["id"], "html")[0].decode()
    assert "<strong>by_region.csv</strong>" in page
    assert re.search(r"\(\d+ bytes\): too large to attach; it is in the workbench", page)
    assert "download=" not in page


def test_runs_that_are_not_the_sessions_are_refused(
    alice: Api, three_runs: dict[str, Any], session_of_bob: str
) -> None:
    path = f"/sessions/{three_runs['session']['id']}/export"
    for runs in ("not-an-id", session_of_bob, ""):
        response = alice.get(path, params={"format": "html", "runs": runs})
        assert response.status_code == 400, (runs, response.text)
        assert response.json()["code"] == "unknown_run"
    assert "not a run id" in alice.get(path, params={"runs": "x"}).json()["detail"]


@pytest.fixture
def session_of_bob(bob: Api, llm: ScriptedLLM) -> str:
    """The id of one of bob's runs."""
    project = bob.project()
    session = bob.post(f"/projects/{project['id']}/sessions", json={"title": "B"}).json()
    llm.script(final_reply("'hi'"))
    return str(finished(ask(bob, session["id"], "Hello?"))["run_id"])


LONG_TITLE = "Average revenue per day by region and month, before and after the spring campaign"


def test_a_long_chart_title_is_fitted_to_the_charts_width(
    alice: Api, session: dict[str, Any]
) -> None:
    """At 390 px a long title would be cut (Plotly never wraps one): the report asks Plotly to
    make room for it (automargin) and its script breaks it into lines by the chart's width.
    What a user sees is checked on screenshots; this guards the settings."""
    code = (
        "import plotly.express as px\n"
        "fig = px.bar(x=['North', 'South'], y=[66.07, 52.11], title=" + repr(LONG_TITLE) + ")\n"
        "fig.show()"
    )
    with alice.stream(
        "POST", f"/sessions/{session['id']}/cells", json={"language": "python", "code": code}
    ) as response:
        assert finished(collect(response))["status"] == "succeeded"
    html = alice.get(f"/sessions/{session['id']}/export", params={"format": "html"}).text
    [chart] = re.findall(r'<script type="application/json" id="chart-[^"]+">(.*?)</script>', html)
    title = json.loads(chart)["layout"]["title"]
    assert title["text"] == LONG_TITLE and title["automargin"] is True
    assert "wrapTitle(text, perLine)" in html and "automargin: true" in html
    assert 'window.addEventListener("resize"' in html
    # The shared report is the same page.
    made = alice.post(f"/sessions/{session['id']}/shares", json={})
    assert made.status_code == 201, made.text
    shared = httpx.get(made.json()["url"], timeout=60).text
    assert "wrapTitle(text, perLine)" in shared and '"automargin":true' in shared

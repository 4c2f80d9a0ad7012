"""A session taken out: a notebook that reruns in Jupyter (executed here by a real kernel),
a standalone HTML report (rendered here by Debian's chromium), and Markdown."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from app.sessions import export
from app.sessions.export import markdown_text, report
from tests.api.conftest import SALES
from tests.api.test_asking import ASK, ask_until_waiting, follow
from tests.api.test_query import READ, ask, finished
from tests.conftest import Api
from tests.support.browser import dump_dom
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

CHARTS = code_reply(
    f"{READ}\nimport plotly.express as px\nimport matplotlib.pyplot as plt\n"
    "totals = df.groupby('region', as_index=False)['revenue'].sum()\n"
    "print(totals.to_string(index=False))\n"
    "fig = px.bar(totals, x='region', y='revenue')\nfig.show()\n"
    "plt.plot([1, 2, 3], [3, 1, 2])\nplt.show()\n"
    "display(totals)",
    "I will total revenue by region and chart it.",
)
HOSTILE = "<script>alert('q')</script> Which region *leads*?"


@pytest.fixture
def recorded(alice: Api, session, llm: ScriptedLLM, long_steps) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """A session with two questions: charts and a table (after a failed step), then one
    where the agent asks the user and uses the answer. (long_steps: the charts' imports can
    take longer than the tests' 4 s step limit on a busy machine; no step limit is tested.)"""
    llm.script(
        code_reply("print(df_missing.sum())", "Let me look."),
        CHARTS,
        final_reply("'**North** leads with 2510.75. <img src=x onerror=alert(1)>'"),
        ASK,
        code_reply("print('kind:', kind, df['revenue'].sum())"),
        final_reply("f'Total {kind} revenue is 4490.75.'"),
    )
    first = ask(alice, session["id"], HOSTILE)
    assert finished(first)["status"] == "succeeded"
    asked = ask_until_waiting(alice, session["id"], "What is the revenue?")[-1]
    run_id = asked.data["run_id"]
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "gross"}).status_code == 200
    assert finished(follow(alice, run_id, asked.id))["status"] == "succeeded"
    return dict(session)


def exported(api: Api, session_id: str, fmt: str) -> tuple[bytes, dict[str, str]]:
    response = api.get(f"/sessions/{session_id}/export", params={"format": fmt})
    assert response.status_code == 200, response.text
    return response.content, dict(response.headers)


def test_the_notebook_holds_the_questions_code_outputs_and_charts(alice: Api, recorded) -> None:  # type: ignore[no-untyped-def]
    body, headers = exported(alice, recorded["id"], "ipynb")
    assert headers["content-type"] == "application/x-ipynb+json"
    assert headers["content-disposition"].startswith('attachment; filename="Sales.ipynb"')
    notebook = nbformat.reads(body.decode(), as_version=4)
    nbformat.validate(notebook)
    cells = notebook.cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# Sales")
    setup = cells[1]
    assert setup.cell_type == "code" and "SESSION_FILES = {'sales data.csv': (" in setup.source
    assert "_ANSWERS = iter(['gross'])" in setup.source

    markdown = [c.source for c in cells if c.cell_type == "markdown"]
    code = [c for c in cells if c.cell_type == "code"][1:]
    # Each question is a Markdown cell, its text escaped (it is not HTML in a notebook).
    assert any(m.startswith("## 1. \\<script\\>") for m in markdown), markdown
    assert any(m.startswith("## 2. What is the revenue?") for m in markdown)
    # The failed step is shown, not run; the steps that ran are code cells, in order.
    assert any("Step 1 failed" in m and "df_missing" in m for m in markdown)
    assert [c.source for c in code] == [
        CHARTS.split("<code>\n")[1].split("\n</code>")[0],
        "final_answer('**North** leads with 2510.75. <img src=x onerror=alert(1)>')",
        ASK.split("<code>\n")[1].split("\n</code>")[0],
        "print('kind:', kind, df['revenue'].sum())",
        "final_answer(f'Total {kind} revenue is 4490.75.')",
    ]
    charts = code[0]
    kinds = [next(iter(o.get("data", {"stream": 0}))) for o in charts.outputs]
    assert kinds == ["stream", "application/vnd.plotly.v1+json", "image/png", "text/html"]
    assert " North  2510.75\n" in charts.outputs[0].text
    assert charts.outputs[1].data["application/vnd.plotly.v1+json"]["data"][0]["type"] == "bar"
    assert base64.b64decode(charts.outputs[2].data["image/png"]).startswith(b"\x89PNG")
    assert '<td>North</td><td class="num">2,510.75</td>' in charts.outputs[3].data["text/html"]
    assert "The agent asked: **Net or gross revenue?**" in "\n".join(markdown)
    answers = [m for m in markdown if m.startswith("**Answer**")]
    assert answers[1] == "**Answer**\n\nTotal gross revenue is 4490.75.\n\n*3 steps*"


def test_the_notebook_reruns_in_jupyter_next_to_the_files(
    alice: Api, recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    body, _ = exported(alice, recorded["id"], "ipynb")
    # The user's consent to run LLM-written code outside the sandbox (the first cell asks).
    monkeypatch.setenv("WORKBENCH_RUN_UNSANDBOXED", "1")
    (tmp_path / "sales data.csv").write_bytes(SALES)
    notebook = nbformat.reads(body.decode(), as_version=4)
    NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    outputs = ["".join(o.get("text", "") for o in c.outputs) for c in code]
    assert " North  2510.75\n" in outputs[1]  # the same numbers as in the workbench
    assert any(o.output_type == "display_data" for o in code[1].outputs)
    assert "Net or gross revenue? → gross" in outputs[3]  # ask_user replays the answer
    assert "kind: gross 4490.75" in outputs[4]
    shown = code[5].outputs[0].data["text/markdown"]
    assert shown == "Total gross revenue is 4490.75."


def test_the_notebook_fetches_missing_files_with_a_token(
    alice: Api, recorded, tmp_path: Path, live: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    body, _ = exported(alice, recorded["id"], "ipynb")
    token = alice.post("/auth/tokens", json={"name": "notebook"}).json()["token"]
    notebook = nbformat.reads(body.decode(), as_version=4)
    setup = nbformat.v4.new_notebook(cells=notebook.cells[:2])
    monkeypatch.setenv("WORKBENCH_RUN_UNSANDBOXED", "1")
    monkeypatch.delenv("WORKBENCH_TOKEN", raising=False)
    with pytest.raises(Exception, match=r"Not next to this notebook: sales data\.csv\."):
        NotebookClient(setup, resources={"metadata": {"path": str(tmp_path)}}).execute()
    monkeypatch.setenv("WORKBENCH_TOKEN", token)
    monkeypatch.setenv("WORKBENCH_URL", live.url)
    setup = nbformat.v4.new_notebook(cells=notebook.cells[:2])
    NotebookClient(setup, resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert (tmp_path / "sales data.csv").read_bytes() == SALES
    assert "fetched sales data.csv" in setup.cells[1].outputs[0].text


def test_the_report_stands_alone_with_interactive_charts(
    alice: Api, recorded, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    body, headers = exported(alice, recorded["id"], "html")
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["content-disposition"].startswith('attachment; filename="Sales.html"')
    page = body.decode()
    # Nothing is fetched: no src or href to anywhere but data: URIs (outside plotly.js,
    # inline), and the page's own policy lets nothing else load.
    markup = re.sub(r"<script nonce=[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.findall(r"""(?:src|href)=["'](?!data:|#)""", markup)
    assert "default-src 'none'; script-src 'nonce-" in page
    # What came from the model, the user and the data is text, never markup.
    assert "&lt;script&gt;alert(&#39;q&#39;)&lt;/script&gt; Which region *leads*?" in page
    assert "<strong>North</strong> leads with 2510.75. &lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "Total gross revenue is 4490.75." in page
    assert "The agent asked: <strong>Net or gross revenue?</strong>" in page
    assert 'src="data:image/png;base64,iVBOR' in page
    assert '<td>North</td><td class="num">2,510.75</td>' in page

    # A real browser draws the chart from the inline plotly.js, under the report's own CSP.
    report = tmp_path / "report.html"
    report.write_bytes(body)
    dom = dump_dom(report.as_uri())
    assert 'class="main-svg"' in dom  # plotly drew its SVG
    assert re.search(r'class="point"|class="bars"', dom)


def test_markdown_export(alice: Api, recorded) -> None:  # type: ignore[no-untyped-def]
    body, headers = exported(alice, recorded["id"], "md")
    assert headers["content-type"] == "text/markdown; charset=utf-8"
    text = body.decode()
    assert text.startswith("# Sales\n")
    assert "## 1. \\<script\\>alert('q')\\</script\\> Which region \\*leads\\*?" in text
    assert "```python\nimport pandas as pd\ndf = pd.read_csv('sales data.csv')" in text
    assert "| region | revenue |\n|---|--:|\n| North | 2,510.75 |" in text
    assert "![plot-1.png](data:image/png;base64," in text or "](data:image/png;base64," in text
    assert "*Interactive chart" in text
    assert "**Answer**\n\nTotal gross revenue is 4490.75." in text


def test_export_answers_only_the_owner_and_known_formats(alice: Api, bob: Api, session) -> None:  # type: ignore[no-untyped-def]
    path = f"/sessions/{session['id']}/export"
    assert bob.get(path).status_code == 404
    assert bob.get(path).json()["code"] == "session_not_found"
    assert alice.get(path, params={"format": "pdf"}).status_code == 422
    # A session with no questions yet is still a notebook (the setup), needing no file.
    empty = nbformat.reads(alice.get(path).text, as_version=4)
    assert len(empty.cells) == 2 and "SESSION_FILES = {}" in empty.cells[1].source
    assert "The session read no project files." in empty.cells[0].source


def test_too_many_exports_at_once_answer_503_with_retry_after(alice: Api, session) -> None:  # type: ignore[no-untyped-def]
    slots = export.SLOTS
    taken = 0
    while slots.take():
        taken += 1
    try:
        busy = alice.get(f"/sessions/{session['id']}/export")
        assert busy.status_code == 503 and busy.headers["retry-after"] == "5"
        assert busy.json()["code"] == "server_busy"
    finally:
        for _ in range(taken):
            slots.give_back()
    assert alice.get(f"/sessions/{session['id']}/export").status_code == 200


def test_fences_and_table_cells_survive_what_they_hold() -> None:
    assert markdown_text.fence("a ``` b", "text") == "````text\na ``` b\n````"
    table = {"columns": ["a|b"], "rows": [["x\ny"]] * 30, "row_count": 30}
    lines = markdown_text.markdown_table(table).splitlines()
    assert lines[0] == "| a\\|b |" and lines[2] == "| x y |"
    assert lines[-1] == "*20 of 30 rows*"
    assert json.loads(str(report._script_json({"s": "</script><!--"}))) == {"s": "</script><!--"}
    assert "</script" not in str(report._script_json({"s": "</script>"}))


# -- The notebook reruns the session, failed steps included ------------------------------

UNUSED = b"id,value\n" + b"1,2\n" * 1000  # a project file no step reads
LEADS = (
    f"{READ}\ntop = df.groupby('region')['revenue'].sum()\nprint('leader:', top.idxmax())\n"
    "margin = df['margin'].mean()\nprint('never printed')"
)


@pytest.fixture
def analysed(alice: Api, session, llm: ScriptedLLM) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """A session whose first step fails on its fourth line after defining `df` and `top`,
    which later steps and a follow-up question use; the agent asks the user once; the
    project holds a file nobody reads."""
    assert alice.upload(session["project_id"], "unused.csv", UNUSED).status_code == 201
    llm.script(
        code_reply(LEADS, "Total by region, then the margin."),
        code_reply("print(top.sort_values(ascending=False).to_string())", "No margin column."),
        final_reply("f'{top.idxmax()} leads with {top.max():.2f}.'"),
        ASK,
        final_reply("f'{kind.capitalize()} revenue of the leader: {top.max():,.2f}.'"),
    )
    first = ask(alice, session["id"], "Which region leads?")
    assert finished(first)["status"] == "succeeded"
    asked = ask_until_waiting(alice, session["id"], "And its revenue?")[-1]
    run_id = asked.data["run_id"]
    assert alice.post(f"/runs/{run_id}/input", json={"answer": "gross"}).status_code == 200
    assert finished(follow(alice, run_id, asked.id))["status"] == "succeeded"
    return dict(session)


def _executed(body: bytes, folder: Path, **options: Any) -> nbformat.NotebookNode:
    notebook = nbformat.reads(body.decode(), as_version=4)
    client = NotebookClient(
        notebook, timeout=120, resources={"metadata": {"path": str(folder)}}, **options
    )
    client.execute()
    return notebook


def test_the_notebook_reruns_failed_steps_as_far_as_they_ran_and_gives_the_same_answers(
    alice: Api, analysed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    runs = alice.get(f"/sessions/{analysed['id']}/runs").json()
    runs = runs["items"] if isinstance(runs, dict) else runs
    answers = [r["final_answer"] for r in runs]
    assert answers == ["North leads with 2510.75.", "Gross revenue of the leader: 2,510.75."]
    assert runs[0]["steps"][0]["error"].startswith("Code execution failed at line")

    body, _ = exported(alice, analysed["id"], "ipynb")
    notebook = nbformat.reads(body.decode(), as_version=4)
    setup = notebook.cells[1].source
    assert "'sales data.csv'" in setup and "unused.csv" not in setup
    assert "unused.csv" not in notebook.cells[0].source
    failed = next(c for c in notebook.cells if "leader:" in c.source)
    assert failed.cell_type == "code"
    assert failed.source.startswith(READ + "\ntop = df.groupby('region')")
    assert "\n# margin = df['margin'].mean()\n# print('never printed')" in failed.source
    assert "KeyError" in failed.source

    # Only the file the session read is next to the notebook, and every cell runs.
    monkeypatch.setenv("WORKBENCH_RUN_UNSANDBOXED", "1")
    (tmp_path / "sales data.csv").write_bytes(SALES)
    ran = _executed(body, tmp_path)
    code = [c for c in ran.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    printed = ["".join(o.get("text", "") for o in c.outputs) for c in code]
    assert printed[1] == "leader: North\n"  # what the workbench printed before the error
    assert "North    2510.75" in printed[2]  # `top` from the failed step
    shown = [
        o.data["text/markdown"]
        for c in code
        for o in c.outputs
        if o.output_type == "display_data" and "text/markdown" in o.data
    ]
    assert shown == answers
    assert "And its revenue" not in "".join(printed)  # nothing asked again: it was answered
    assert "Net or gross revenue? → gross" in "".join(printed)


def test_the_notebooks_helpers_are_defined_even_when_files_are_missing(
    alice: Api, analysed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    body, _ = exported(alice, analysed["id"], "ipynb")
    notebook = nbformat.reads(body.decode(), as_version=4)
    probe = nbformat.v4.new_code_cell("print(final_answer('ok'), ask_user('Net or gross?'))")
    notebook.cells = [notebook.cells[1], probe]
    monkeypatch.setenv("WORKBENCH_RUN_UNSANDBOXED", "1")
    monkeypatch.delenv("WORKBENCH_TOKEN", raising=False)
    NotebookClient(
        notebook, resources={"metadata": {"path": str(tmp_path)}}, allow_errors=True
    ).execute()
    error = next(o for o in notebook.cells[0].outputs if o.output_type == "error")
    # It names only the file the session read, not every file of the project.
    assert error.ename == "FileNotFoundError"
    assert error.evalue.startswith("Not next to this notebook: sales data.csv. Put them there")
    printed = "".join(o.get("text", "") for o in notebook.cells[1].outputs)
    assert "Net or gross? → gross\nok gross\n" in printed

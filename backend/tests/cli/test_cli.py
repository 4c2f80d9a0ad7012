"""The `workbench` command as a user runs it: the installed script in a subprocess, talking
to the live server over HTTP with an API token, the scripted LLM behind the server.

Answers to the agent's questions and code reviews go through stdin, as the command reads
them when stdin is not a terminal.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import SALES
from tests.api.test_plans_and_checks import agent_settings
from tests.conftest import WAIT_FOR_GO, Api, release
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.proxy import CuttableProxy
from tests.support.server import LiveServer
from tests.support.services import free_port

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)

WORKBENCH = Path(sys.executable).parent / "workbench"
READ = "import pandas as pd\ndf = pd.read_csv('sales.csv')"
ALICE = ("alice@example.com", "user-password-1")
# Patience for a subprocess that is expected to end (a guard against hanging, not a timing).
ENDS_WITHIN = 300


@dataclasses.dataclass
class Result:
    code: int
    stdout: str
    stderr: str


@dataclasses.dataclass
class Cli:
    """Runs `workbench` with a config directory of its own and, by default, alice's token."""

    url: str
    token: str | None
    home: Path

    def env(self, *, token: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
        env.update(WORKBENCH_CONFIG_DIR=str(self.home / "config"), NO_COLOR="1", COLUMNS="120")
        if token and self.token:
            env.update(WORKBENCH_URL=self.url, WORKBENCH_TOKEN=self.token)
        return env

    def run(
        self, *args: str, stdin: str = "", token: bool = True, cwd: Path | None = None
    ) -> Result:
        done = subprocess.run(
            [str(WORKBENCH), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(token=token),
            cwd=cwd or self.home,
            timeout=ENDS_WITHIN,
            start_new_session=True,  # no controlling terminal: nothing can prompt on a tty
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str) -> Running:
        process = subprocess.Popen(
            [str(WORKBENCH), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
            cwd=self.home,
            start_new_session=True,
        )
        return Running(process)


class Running:
    """A `workbench` process whose output the test reads as it comes."""

    def __init__(self, process: subprocess.Popen[str]):
        self.process = process
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.changed = threading.Condition()
        self.readers = [
            threading.Thread(target=self._read, args=(stream, lines), daemon=True)
            for stream, lines in ((process.stdout, self.stdout), (process.stderr, self.stderr))
        ]
        for reader in self.readers:
            reader.start()

    def _read(self, stream: Any, lines: list[str]) -> None:
        for line in stream:
            with self.changed:
                lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait_for(self, text: str, lines: list[str]) -> None:
        with self.changed:
            found = self.changed.wait_for(
                lambda: any(text in line for line in lines) or self.process.poll() is not None,
                timeout=ENDS_WITHIN,
            )
        assert found and any(text in line for line in lines), "".join(self.stdout + self.stderr)

    def finish(self) -> Result:
        code = self.process.wait(ENDS_WITHIN)
        for reader in self.readers:  # to the end of both streams
            reader.join(ENDS_WITHIN)
        return Result(code, "".join(self.stdout), "".join(self.stderr))


@pytest.fixture
def cli(live: LiveServer, alice: Api, tmp_path: Path) -> Cli:
    created = alice.post("/auth/tokens", json={"name": "cli tests"})
    assert created.status_code == 201, created.text
    return Cli(live.url, created.json()["token"], tmp_path)


@pytest.fixture
def sales(tmp_path: Path) -> Path:
    path = tmp_path / "sales.csv"
    path.write_bytes(SALES)
    return path


def the_session(api: Api, project: str = "Terminal") -> dict[str, Any]:
    """The only session of the project named `project`."""
    projects = [p for p in api.get("/projects").json()["items"] if p["name"] == project]
    assert len(projects) == 1, projects
    sessions = api.get(f"/projects/{projects[0]['id']}/sessions").json()["items"]
    assert len(sessions) == 1, sessions
    return dict(sessions[0])


def runs_of(api: Api, session_id: str) -> list[dict[str, Any]]:
    return list(api.get(f"/sessions/{session_id}/runs").json()["items"])


def session_id_in(stderr: str) -> str:
    found = re.search(r"Session ([0-9a-f-]{36})", stderr)
    assert found, stderr
    return found.group(1)


# -- asking ------------------------------------------------------------------------------


def test_ask_with_a_file_streams_the_code_its_output_and_the_answer(
    cli: Cli, alice: Api, llm: ScriptedLLM, sales: Path
) -> None:
    llm.script(
        code_reply(f"{READ}\nprint(df.groupby('region')['revenue'].sum())", "Sum by region."),
        final_reply("'North sells more: **2510.75** against 1980.0.'"),
    )
    asked = cli.run("ask", "--file", str(sales), "Which", "region", "sells", "more?")
    assert asked.code == 0, asked.stderr
    out = asked.stdout
    assert "Sum by region." in out
    assert "print(df.groupby('region')['revenue'].sum())" in out
    assert "│ North    2510.75" in out
    assert "North sells more: **2510.75** against 1980.0." in out  # Markdown source in a pipe
    assert "✓ succeeded" in out and "2 steps" in out
    assert out.index("Sum by region.") < out.index("North    2510.75") < out.index("North sells")
    assert "Uploaded sales.csv" in asked.stderr

    # A new session in the "Terminal" project, titled after the question, holding the file.
    session = the_session(alice)
    assert session_id_in(asked.stderr) == session["id"]
    assert session["title"] == "Which region sells more?"
    files = alice.get(f"/projects/{session['project_id']}/files").json()["items"]
    assert [f["name"] for f in files] == ["sales.csv"]
    run = runs_of(alice, session["id"])[0]
    assert run["status"] == "succeeded" and run["query"] == "Which region sells more?"

    # --session continues it (by id or by title); the variables are still there.
    llm.script(code_reply("print(df['revenue'].sum())"), final_reply("'4490.75 in all.'"))
    again = cli.run("ask", "--session", "Which region sells more?", "And in all?")
    assert again.code == 0, again.stderr
    assert "│ 4490.75" in again.stdout and "4490.75 in all." in again.stdout
    assert [r["query"] for r in runs_of(alice, session["id"])] == [
        "Which region sells more?",
        "And in all?",
    ]


def test_a_failed_run_exits_1_with_its_reason(cli: Cli, llm: ScriptedLLM) -> None:
    llm.script(*["Just chatting, no code."] * 6)
    asked = cli.run("ask", "Answer properly?")
    assert asked.code == 1
    assert "✗ failed" in asked.stdout
    assert "Error: The run failed:" in asked.stderr and "all 4 steps" in asked.stderr


def test_a_refused_question_prints_the_servers_sentence(
    cli: Cli, alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project("Capped")
    assert alice.patch(f"/projects/{project['id']}", json={"budget_tokens": 0}).status_code == 200
    refused = cli.run("ask", "--project", "Capped", "Anything?")
    assert refused.code == 1
    assert "token budget, so it takes no more questions" in refused.stderr
    assert "HTTP 403" in refused.stderr and "Traceback" not in refused.stderr

    assert alice.get(f"/projects/{project['id']}/sessions").json()["items"] == []  # none left

    unknown = cli.run("ask", "--model", "openai/gpt-99", "Anything?")
    assert unknown.code == 1 and "HTTP 400" in unknown.stderr
    assert llm.requests == []
    terminal = next(p for p in alice.get("/projects").json()["items"] if p["name"] == "Terminal")
    assert alice.get(f"/projects/{terminal['id']}/sessions").json()["items"] == []


def test_an_unreachable_server_is_named(cli: Cli) -> None:
    cli.url = f"http://127.0.0.1:{free_port()}"
    listed = cli.run("projects")
    assert listed.code == 1
    assert f"Cannot reach the workbench at {cli.url}" in listed.stderr
    assert "Traceback" not in listed.stderr


def test_json_prints_each_event_as_one_line(cli: Cli, llm: ScriptedLLM) -> None:
    llm.script(code_reply("print(6 * 7)"), final_reply("'42'"))
    asked = cli.run("ask", "--json", "Six times seven?")
    assert asked.code == 0, asked.stderr
    events = [json.loads(line) for line in asked.stdout.splitlines()]
    assert all(set(e) == {"event", "seq", "data"} for e in events)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    names = [e["event"] for e in events]
    assert names[0] == "run.started" and names[-1] == "run.finished"
    assert {"step.started", "model.delta", "step.code", "step.output", "final"} <= set(names)
    assert events[-1]["data"]["status"] == "succeeded"
    assert [e["data"]["output"] for e in events if e["event"] == "step.output"] == ["42\n"]


def test_artifacts_are_listed_and_saved(
    cli: Cli, alice: Api, llm: ScriptedLLM, sales: Path
) -> None:
    llm.script(
        code_reply(
            f"{READ}\nimport plotly.express as px\n"
            "px.bar(df, x='region', y='revenue').show()\n"
            "totals = df.groupby('region', as_index=False)['revenue'].sum()\n"
            "display(totals)\ntotals.to_csv('totals.csv', index=False)"
        ),
        final_reply("'Charted.'"),
    )
    saved = cli.home / "saved"
    asked = cli.run("ask", "--file", str(sales), "--save", str(saved), "Chart it")
    assert asked.code == 0, asked.stderr
    assert (saved / "totals.csv").read_text() == "region,revenue\nNorth,2510.75\nSouth,1980.0\n"
    assert "(plotly," in asked.stdout and "(table," in asked.stdout
    assert f"saved to {saved / 'totals.csv'}" in asked.stdout
    assert re.search(r"North\s+2510\.75", asked.stdout)  # the table's first rows, shown
    # The chart: Plotly's JSON, and beside it a page that opens anywhere with no network
    # (plotly.js inside it, no CDN), both named on the artifact's line.
    named = re.search(r"\(plotly, [^)]*\)\s+saved to (\S+\.json) and (\S+\.html)", asked.stdout)
    assert named, asked.stdout
    chart, page = Path(named.group(1)), Path(named.group(2))
    assert chart.parent == page.parent == saved and page.stem == chart.stem
    assert json.loads(chart.read_text())["data"][0]["type"] == "bar"
    html = page.read_text()
    assert '"type":"bar"' in html and '"North","South"' in html
    assert "Plotly.newPlot" in html and len(html) > 3_000_000  # plotly.js, inlined
    assert not re.search(r"<script[^>]*\bsrc=", html)
    assert list(saved.glob("*.html")) == [page]  # a page for the chart only, not the tables

    session = the_session(alice)
    listed = cli.run("artifacts", "list", session["id"], "--json")
    kinds = {a["kind"] for a in json.loads(listed.stdout)}
    assert {"plotly", "table", "file"} <= kinds
    figure = next(a for a in json.loads(listed.stdout) if a["kind"] == "plotly")
    fetched = cli.run("artifacts", "download", figure["id"], "-o", "figure.json")
    assert fetched.code == 0, fetched.stderr
    assert json.loads((cli.home / "figure.json").read_text())["data"][0]["type"] == "bar"

    # Without --save, each artifact comes with the command that fetches it.
    llm.script(
        code_reply("import pandas as pd\npd.DataFrame({'a': [1]}).to_csv('a.csv')"),
        final_reply("'ok'"),
    )
    again = cli.run("ask", "--session", session["id"], "Another")
    assert re.search(
        r"a\.csv \(file, .*\)\s+workbench artifacts download [0-9a-f-]{36}", again.stdout
    )


def test_the_check_of_an_answer_is_told_in_words_even_without_a_reason(
    cli: Cli, live: LiveServer, llm: ScriptedLLM
) -> None:
    with agent_settings(live, AGENT_VERIFY_ROUNDS=1):
        # A checker that approves without giving a reason (models do): no dangling colon.
        llm.script(final_reply("'42'"), json.dumps({"verdict": "approve"}))
        asked = cli.run("ask", "The answer?")
        assert asked.code == 0, asked.stderr
        assert "✓ Answer checked and approved (the check gave no reason)\n" in asked.stdout
        assert "Answer checked:" not in asked.stdout

        llm.script(
            final_reply("'About 4,500.'"),
            json.dumps({"verdict": "revise", "reason": "No code ran."}),
            final_reply("'About 4,500, I am sure.'"),
            json.dumps({"verdict": "revise", "reason": "Still no code ran."}),
            final_reply("'4490.75'"),
            json.dumps({"verdict": "approve", "reason": "It matches the output."}),
        )
        doubted = cli.run("ask", "Total revenue?")
        checked = cli.run("ask", "Total revenue, again?")
    assert doubted.code == 0, doubted.stderr
    assert "↻ The check asks for more: No code ran.\n" in doubted.stdout
    # After its last revision the answer is shown anyway: the line says so.
    assert (
        "! The check still asks for more, but the answer stands: Still no code ran.\n"
        in doubted.stdout
    )
    assert checked.code == 0, checked.stderr
    assert "✓ Answer checked: It matches the output.\n" in checked.stdout


# -- the user in the loop ----------------------------------------------------------------


def test_the_agents_question_is_answered_from_stdin(
    cli: Cli, alice: Api, llm: ScriptedLLM, sales: Path
) -> None:
    asks = code_reply(f"{READ}\nkind = ask_user('Net or gross revenue?')", "Ambiguous.")
    llm.script(
        asks,
        code_reply("print(kind, df['revenue'].sum())"),
        final_reply("f'Total {kind} revenue is 4490.75.'"),
    )
    asked = cli.run("ask", "--file", str(sales), "What is the revenue?", stdin="gross\n")
    assert asked.code == 0, asked.stderr
    assert "? The agent asks: Net or gross revenue?" in asked.stdout
    assert "↳ answered: gross" in asked.stdout and "│ gross 4490.75" in asked.stdout
    assert "Total gross revenue is 4490.75." in asked.stdout
    session = the_session(alice)
    run = runs_of(alice, session["id"])[0]
    assert run["inputs"] == [{"step": 1, "question": "Net or gross revenue?", "answer": "gross"}]

    # No answer on stdin: the run waits, and the command says how to answer it later.
    llm.script(
        asks,
        code_reply("print(kind, df['revenue'].sum())"),
        final_reply("f'Total {kind} revenue is 4490.75.'"),
    )
    unanswered = cli.run("ask", "--session", session["id"], "Again?")
    assert unanswered.code == 1
    run_id = runs_of(alice, session["id"])[-1]["id"]
    assert f'workbench runs answer {run_id} "…"' in unanswered.stderr
    assert alice.get(f"/runs/{run_id}").json()["status"] == "waiting_input"
    answered = cli.run("runs", "answer", run_id, "net")
    assert answered.code == 0, answered.stderr
    followed = cli.run("runs", "follow", run_id)
    assert followed.code == 0, followed.stderr
    assert "│ net 4490.75" in followed.stdout and "Total net revenue is 4490.75." in followed.stdout
    assert followed.stdout.count("? The agent asks") == 1  # replayed, not asked again


def test_review_mode_approves_rejects_and_edits_from_stdin(
    cli: Cli, alice: Api, llm: ScriptedLLM
) -> None:
    llm.script(
        code_reply("print('first try')", "Try this."),
        code_reply("print('second try')", "Then this."),
        code_reply("print('third try')", "And this."),
        final_reply("'Reviewed.'"),
    )
    decisions = "reject not that one\napprove\nedit\nprint('my own code')\nEOF\n"
    asked = cli.run("ask", "--review", "Review me", stdin=decisions)
    assert asked.code == 0, asked.stderr
    out = asked.stdout
    assert out.count("waits for your review") == 3
    assert "↳ rejected: not that one" in out and "↳ approved" in out and "↳ edited" in out
    assert "│ first try" not in out and "│ second try" in out
    assert "│ third try" not in out and "│ my own code" in out
    assert "Reviewed." in out

    session = the_session(alice)
    assert session["autonomy"] == "review"
    run = runs_of(alice, session["id"])[0]
    assert [(a["decision"], a["feedback"]) for a in run["approvals"]] == [
        ("reject", "not that one"),
        ("approve", None),
        ("edit", None),
    ]
    assert run["approvals"][2]["code"].strip() == "print('my own code')"

    switched = cli.run("sessions", "review", session["id"], "off")
    assert switched.code == 0, switched.stderr
    assert alice.get(f"/sessions/{session['id']}").json()["autonomy"] == "auto"


def test_ctrl_c_stops_the_run_on_the_server(
    cli: Cli, alice: Api, llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    llm.script(code_reply(WAIT_FOR_GO), final_reply("'never'"))
    running = cli.start("ask", "Hold on")
    running.wait_for("pd.read_csv('go.csv')", running.stdout)  # the held step is running
    running.process.send_signal(signal.SIGINT)
    ended = running.finish()
    assert ended.code == 130, ended.stderr
    assert "Cancelled" in ended.stderr
    run = runs_of(alice, the_session(alice)["id"])[0]
    assert run["status"] == "cancelled" and run["final_answer"] is None


def test_a_dropped_stream_is_resumed_where_it_stopped(
    cli: Cli, alice: Api, llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    port = int(cli.url.rsplit(":", 1)[1])
    proxy = CuttableProxy("127.0.0.1", port).start()
    try:
        cli.url = f"http://{proxy.address}"
        llm.script(code_reply(WAIT_FOR_GO), final_reply("'Released at last.'"))
        running = cli.start("ask", "Hold on")
        running.wait_for("pd.read_csv('go.csv')", running.stdout)
        proxy.cut()
        running.wait_for("reconnecting", running.stderr)
        proxy.restore()
        session = the_session(alice)
        release(long_steps, session)
        ended = running.finish()
    finally:
        proxy.stop()
    assert ended.code == 0, ended.stderr
    assert "│ released" in ended.stdout and "Released at last." in ended.stdout
    assert ended.stdout.count("pd.read_csv('go.csv')") == 1  # nothing shown twice


# -- logging in --------------------------------------------------------------------------


def test_login_stores_a_private_token_that_later_commands_use(
    cli: Cli, alice: Api, live: LiveServer
) -> None:
    wrong = cli.run(
        "login", "--url", live.url, stdin=f"{ALICE[0]}\nnot-the-password\n", token=False
    )
    assert wrong.code == 1 and "Error:" in wrong.stderr and "HTTP 401" in wrong.stderr

    logged = cli.run("login", "--url", live.url, stdin=f"{ALICE[0]}\n{ALICE[1]}\n", token=False)
    assert logged.code == 0, logged.stderr
    assert f"Logged in to {live.url} as {ALICE[0]}." in logged.stdout
    path = cli.home / "config" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = json.loads(path.read_text())
    assert stored["url"] == live.url and stored["token"].startswith("wb_")
    assert ALICE[1] not in path.read_text()
    names = [t["name"] for t in alice.get("/auth/tokens").json()["items"]]
    assert any(n.startswith("workbench CLI on ") for n in names)

    # No WORKBENCH_URL or WORKBENCH_TOKEN: the stored ones serve.
    me = cli.run("whoami", token=False)
    assert me.code == 0, me.stderr
    assert me.stdout.strip() == f"{ALICE[0]} on {live.url}"

    out = cli.run("logout", token=False)
    assert out.code == 0, out.stderr
    assert "revoked" in out.stdout
    assert not path.exists()
    with Api(live, stored["token"]) as old:
        assert old.get("/auth/me").status_code == 401
    gone = cli.run("whoami", token=False)
    assert gone.code == 1 and "workbench login" in gone.stderr


# -- lists and management ----------------------------------------------------------------


def test_projects_files_sessions_and_runs_are_listed_and_managed(
    cli: Cli, alice: Api, llm: ScriptedLLM, sales: Path
) -> None:
    created = cli.run("projects", "create", "Sales", "--description", "Revenue by region")
    assert created.code == 0, created.stderr
    projects = json.loads(cli.run("projects", "--json").stdout)
    assert [p["name"] for p in projects] == ["Sales"]
    project_id = projects[0]["id"]
    table = cli.run("projects").stdout
    assert project_id in table and "Sales" in table

    uploaded = cli.run("files", "upload", str(sales), "--project", "sales")  # any case
    assert uploaded.code == 0, uploaded.stderr
    files = json.loads(cli.run("files", "list", "--json", "-p", "Sales").stdout)
    assert [(f["name"], f["size"]) for f in files] == [("sales.csv", len(SALES))]
    assert "sales.csv" in cli.run("files").stdout
    fetched = cli.run("files", "download", "sales.csv", "-o", "copy.csv")
    assert fetched.code == 0, fetched.stderr
    assert (cli.home / "copy.csv").read_bytes() == SALES

    made = cli.run("sessions", "create", "Q1", "-p", project_id, "--json")
    session = json.loads(made.stdout)
    assert session["title"] == "Q1" and session["project_id"] == project_id
    assert "Q1" in cli.run("sessions").stdout
    assert [s["id"] for s in json.loads(cli.run("sessions", "--json").stdout)] == [session["id"]]
    assert "no runs yet" in cli.run("runs", "list", "Q1").stdout

    llm.script(code_reply(f"{READ}\nprint(len(df))"), final_reply("'4 rows.'"))
    assert cli.run("ask", "-s", "Q1", "How many rows?").code == 0
    runs = json.loads(cli.run("runs", "list", "Q1", "--json").stdout)
    assert [(r["status"], r["query"]) for r in runs] == [("succeeded", "How many rows?")]
    listed = cli.run("runs", "list", session["id"]).stdout
    assert runs[0]["id"] in listed and "succeeded" in listed
    shown = cli.run("runs", "show", runs[0]["id"])
    assert "print(len(df))" in shown.stdout and "│ 4" in shown.stdout and "4 rows." in shown.stdout
    assert json.loads(cli.run("runs", "show", runs[0]["id"], "--json").stdout)["status"] == (
        "succeeded"
    )

    kept = cli.run("projects", "delete", "Sales", stdin="n\n")
    assert kept.code == 1 and len(alice.get("/projects").json()["items"]) == 1
    assert cli.run("files", "delete", "sales.csv", "--yes").code == 0
    assert alice.get(f"/projects/{project_id}/files").json()["items"] == []
    assert cli.run("sessions", "delete", "Q1", "--yes").code == 0
    assert cli.run("projects", "delete", "Sales", "--yes").code == 0
    assert alice.get("/projects").json()["items"] == []


def test_names_that_match_twice_or_not_at_all_are_refused(cli: Cli, alice: Api) -> None:
    first, second = alice.project("Twin"), alice.project("Twin")
    twice = cli.run("sessions", "list", "--project", "Twin")
    assert twice.code == 1
    assert '2 projects match "Twin"' in twice.stderr
    assert first["id"] in twice.stderr and second["id"] in twice.stderr
    by_id = cli.run("sessions", "list", "--project", first["id"][:8])
    assert by_id.code == 0, by_id.stderr
    missing = cli.run("files", "list", "--project", "Nope")
    assert missing.code == 1 and 'No project "Nope"' in missing.stderr


def test_a_session_is_found_by_the_start_of_its_title_when_only_one_starts_so(
    cli: Cli, alice: Api
) -> None:
    project = alice.project("Titles")
    made = {}
    for title in ("Revenue by region 2025", "Revenue by month", "Churn in Q3"):
        created = alice.post(f"/projects/{project['id']}/sessions", json={"title": title})
        assert created.status_code == 201, created.text
        made[title] = created.json()["id"]

    for ref in ("churn", "Revenue by r", "REVENUE BY M"):
        found = cli.run("runs", "list", ref, "--json")
        assert found.code == 0, (ref, found.stderr)
        assert json.loads(found.stdout) == []
    renamed = cli.run("sessions", "rename", "churn", "Churn in Q3, final")
    assert renamed.code == 0, renamed.stderr
    assert "Renamed session Churn in Q3 to Churn in Q3, final." in renamed.stdout
    assert alice.get(f"/sessions/{made['Churn in Q3']}").json()["title"] == "Churn in Q3, final"

    both = cli.run("runs", "list", "Revenue")
    assert both.code == 1
    assert '2 sessions have a title starting with "Revenue":' in both.stderr
    for title in ("Revenue by region 2025", "Revenue by month"):
        assert f'"{title}" ({made[title]})' in both.stderr
    assert "Give more of the title, or the id." in both.stderr

    none = cli.run("runs", "list", "Margins")
    assert none.code == 1
    assert 'No session is called "Margins" or has a title starting with it.' in none.stderr


# -- export ------------------------------------------------------------------------------


def test_export_writes_a_notebook_next_to_the_projects_files(
    cli: Cli, alice: Api, llm: ScriptedLLM, sales: Path
) -> None:
    llm.script(code_reply(f"{READ}\nprint(df['revenue'].sum())"), final_reply("'4490.75'"))
    asked = cli.run("ask", "--file", str(sales), "Total revenue?")
    assert asked.code == 0, asked.stderr
    session_id = session_id_in(asked.stderr)

    folder = cli.home / "notebook"
    folder.mkdir()
    exported = cli.run("export", session_id, "--format", "ipynb", "--with-files", cwd=folder)
    assert exported.code == 0, exported.stderr
    notebooks = list(folder.glob("*.ipynb"))
    assert len(notebooks) == 1, list(folder.iterdir())
    cells = json.loads(notebooks[0].read_text())["cells"]
    assert any("df['revenue'].sum()" in "".join(c["source"]) for c in cells)
    assert (folder / "sales.csv").read_bytes() == SALES

    markdown = cli.run("export", "Total revenue?", "-F", "md", "-o", "report.md")
    assert markdown.code == 0, markdown.stderr
    assert "4490.75" in (cli.home / "report.md").read_text()

    # Questions chosen by number; a number past the session's is refused with the count.
    chosen = cli.run("export", session_id, "-F", "html", "--runs", "1", "-o", "one.html")
    assert chosen.code == 0, chosen.stderr
    assert "Total revenue?" in (cli.home / "one.html").read_text()
    past = cli.run("export", session_id, "-F", "html", "--runs", "2")
    assert past.code == 1 and "the session has 1 question, not 2" in past.stderr

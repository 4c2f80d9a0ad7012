"""Attempts of one question (issue 44) are hostile to each other like any code: each runs
in its own sandbox on its own folder, so an attempt cannot read what a sibling wrote nor
plant a file in the sibling's folder, by the host's path or by a relative one."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

from app.attempts.spaces import space_id
from app.runs.workspace import workspace_dir
from tests.api.attempts_script import FIRST, SECOND, responder
from tests.api.test_query import _wait_for, finished, of
from tests.conftest import WAIT_FOR_GO, Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event, read_into

SECRET = "sibling-secret-5d2e"


def test_an_attempt_cannot_read_or_write_a_siblings_folder(
    alice: Api, llm: ScriptedLLM, long_steps: LiveServer
) -> None:
    project = alice.project("Siblings")
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    seen: list[Event] = []
    sibling: list[Path] = []

    def attack() -> str:
        # Written once the sibling's secret is on disk (its first step wrote it).
        _wait_for(lambda: bool(seen), 60)
        folder = workspace_dir(
            long_steps.settings.DATA_DIR, space_id(uuid.UUID(seen[0].data["run_id"]), 1)
        )
        sibling.append(folder)
        _wait_for(lambda: (folder / "secret.csv").exists(), 60)
        relative = f"../{folder.name}"
        return code_reply(
            "import pandas as pd\n"
            f"for path in [{str(folder / 'secret.csv')!r}, {relative + '/secret.csv'!r}]:\n"
            "    try:\n"
            "        print('read', pd.read_csv(path).to_string())\n"
            "    except Exception as exc:\n"
            "        print('refused read', str(exc)[:80])\n"
            f"for path in [{str(folder / 'planted.csv')!r}, {relative + '/planted2.csv'!r}]:\n"
            "    try:\n"
            "        pd.DataFrame({'x': [1]}).to_csv(path)\n"
            "        print('wrote', path)\n"
            "    except Exception as exc:\n"
            "        print('refused write', str(exc)[:80])\n"
        )

    llm.responder = responder(
        {
            FIRST: [
                code_reply(
                    f"import pandas as pd\npd.DataFrame({{'s': [{SECRET!r}]}}).to_csv("
                    "'secret.csv', index=False)\n" + WAIT_FOR_GO
                ),
                final_reply("'done'"),
            ],
            SECOND: [attack, final_reply("'attacked'")],
        }
    )

    def ask() -> None:
        with alice.stream(
            "POST",
            f"/sessions/{session['id']}/query",
            json={"query": "Total?", "attempts": 2},
        ) as response:
            read_into(response, seen)

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    _wait_for(
        lambda: any(e.event == "attempt.finished" and e.data["attempt"] == 2 for e in seen), 120
    )
    (sibling[0] / "go.csv").write_text("a\n1\n")  # the first attempt goes on
    thread.join(120)
    assert finished(seen)["status"] == "succeeded"
    printed = "\n".join(o["output"] for o in of(seen, "step.output") if o["attempt"] == 2)
    assert SECRET not in printed, printed
    assert printed, [str(e.data) for e in seen if e.event == "step.error"]
    assert printed.count("refused read") == 2, printed
    assert "wrote" not in printed and printed.count("refused write") == 2, printed
    # Nothing was planted (the spaces are gone now; nothing landed beside them either).
    root = workspace_dir(long_steps.settings.DATA_DIR, uuid.UUID(session["id"])).parent
    assert not list(root.rglob("planted*.csv"))

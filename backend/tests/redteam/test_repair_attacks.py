"""Hostile code in parallel repair (issue 44): a repair strategy's code runs in a worker of
its own, on a copy of the run's workspace. Whatever it does there — overwrite the run's
files, plant new ones, set variables — reaches the run only through being chosen (and then
as code run again in the run's own worker), never as state."""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from app.runs.repair_workers import copy_tree
from tests.api.test_plans_and_checks import agent_settings, verdict
from tests.api.test_query import ask, finished, of
from tests.redteam.conftest import Target
from tests.support.llm import ScriptedLLM, code_reply, final_reply

HIJACK = (
    "import pandas as pd\n"
    "pd.DataFrame({'v': [666]}).to_csv('notes.csv', index=False)\n"
    "pd.DataFrame({'v': [1]}).to_csv('planted.csv', index=False)\n"
    "marker = 'hijacked'\n"
)
MAIN_FIRST = (
    "import pandas as pd\n"
    "pd.DataFrame({'v': [1]}).to_csv('notes.csv', index=False)\n"
    "marker = 'main'\n"
    "print(missing_name)\n"  # fails after writing: the run's state before the repair
)
CHECK = (
    "import pandas as pd\n"
    "print('notes', pd.read_csv('notes.csv')['v'].tolist(), 'marker', marker)\n"
    "try:\n    print('planted', len(pd.read_csv('planted.csv')))\n"
    "except FileNotFoundError:\n    print('no planted file')\n"
)


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content)
    return str(content or "")


def test_a_strategy_cannot_touch_the_runs_state_unless_chosen(
    target: Target, llm: ScriptedLLM
) -> None:
    main = [code_reply(MAIN_FIRST), code_reply("print(missing_name)"), code_reply(CHECK)]
    main.append(final_reply("'done'"))

    def answer(messages: list[dict[str, Any]]) -> str:
        last = text_of(messages[-1])
        if "You check a repair" in last:  # the hijacker that ran is rejected
            return verdict("revise" if "planted" in last else "approve", "checked")
        if "Repair strategy: re-read" in last:  # hijacks, then fails
            return code_reply(HIJACK + "raise ValueError('gave up')")
        if "Repair strategy: a simpler method" in last:  # the harmless winner
            return code_reply("print('repaired')")
        if "Repair strategy: a different library" in last:  # hijacks and runs
            return code_reply(HIJACK + "print('done too')")
        return main.pop(0) if main else "no more"

    session_id = target.session()
    llm.script()
    llm.responder = answer
    try:
        # In process, six steps are plenty; a deployed backend keeps its own (12 in compose).
        in_process = hasattr(target.live, "settings")
        steps = agent_settings(target.live, AGENT_MAX_STEPS=6) if in_process else nullcontext()  # type: ignore[arg-type]
        with steps:
            events = ask(target.api, session_id, "red team: hijack from a repair")
    finally:
        llm.responder = None
    assert finished(events)["status"] == "succeeded", finished(events)
    [repaired] = of(events, "repair")
    assert repaired["chosen"] == 2, repaired
    printed = "".join(d["output"] for d in of(events, "step.output"))
    # The run's files and variables are as its own steps left them.
    assert "notes [1] marker main" in printed and "no planted file" in printed, printed
    assert target.surroundings.workspace_files(session_id, "planted*") == []
    if in_process:  # the strategies' folders are gone (a deployed backend's are not at hand)
        folders = Path(target.live.settings.DATA_DIR, "workspaces").iterdir()  # type: ignore[union-attr]
        assert not [p.name for p in folders if "-repair-" in p.name]
    assert target.surroundings.changes() == []
    assert target.surroundings.connections() == 0


def test_the_workspace_copy_follows_no_link_and_opens_no_fifo(tmp_path: Path) -> None:
    # What a run's code left in its workspace is copied for the strategies by the host:
    # a link (to a host file or folder) stays a link, its bytes never read; a hard link to
    # a host file is left out; a FIFO is left out (opening it would block the backend); a
    # file is copied (not linked: a strategy's write in place cannot reach the run's file).
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    source = tmp_path / "ws"
    (source / "sub").mkdir(parents=True)
    (source / "data.csv").write_text("v\n1\n")
    os.symlink(secret, source / "link.txt")
    os.symlink(tmp_path, source / "sub" / "up")
    os.link(secret, source / "hard.txt")
    os.mkfifo(source / "pipe")
    target = tmp_path / "ws-repair-1"
    copy_tree(source, target)
    assert (target / "link.txt").is_symlink()
    assert os.readlink(target / "link.txt") == str(secret)
    assert (target / "sub" / "up").is_symlink()
    assert not os.path.lexists(target / "hard.txt")
    assert not (target / "pipe").exists()
    assert (target / "data.csv").read_text() == "v\n1\n"
    assert (target / "data.csv").stat().st_ino != (source / "data.csv").stat().st_ino
    copied = [p for p in target.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not any("host secret" in p.read_text() for p in copied)

"""Attacks on the workspace's disk quota (SANDBOX_DISK_MB, 64 MB here), asked as questions.

Every file the sandbox writes is hostile: a tree deeper than any path the host could spell
(PATH_MAX, and Python's recursion limit), sparse files that hold little on disk but cost
their whole size to copy. The quota must count them, the step that wrote them must be
stopped, and deleting the session must remove all of it from the host.
"""

from __future__ import annotations

import httpx

from tests.redteam.conftest import SETTINGS, Target
from tests.redteam.test_payloads import LIBC, ask
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sse import Event

QUOTA = SETTINGS["SANDBOX_DISK_MB"] << 20

# 2,000 levels named "d" and 40 of 200 characters: ~12,000 bytes of path (PATH_MAX is
# 4,096) and deeper than a recursive walk goes; then 160 MB of files at the bottom.
DEEP_TREE = (
    "import numpy as np\n"
    f"libc = {LIBC}\n"
    "for level in range(2000):\n"
    "    libc.mkdir(b'd', 493)\n"
    "    libc.chdir(b'd')\n"
    "for level in range(40):\n"
    "    libc.mkdir(b'n' * 200, 493)\n"
    "    libc.chdir(b'n' * 200)\n"
    "for i in range(40):\n"
    "    np.zeros(4 << 20, dtype=np.uint8).tofile(f'fill-{i}.csv')\n"
)

# Twelve files of 60 MB each (a file may not pass the quota: RLIMIT_FSIZE), one byte
# written at the end of each: 720 MB to copy, a few kB on disk.
SPARSE_FILES = (
    "import io\n"
    "for i in range(12):\n"
    "    f = io.open(f'sparse-{i}.csv', 'wb')\n"
    "    f.seek(60 << 20)\n"
    "    f.write(b'x')\n"
    "    f.close()\n"
)


def quota_errors(events: list[Event]) -> list[str]:
    return [
        str(e.data["error"])
        for e in events
        if e.event == "step.error" and "disk quota" in str(e.data["error"])
    ]


def step_errors(events: list[Event]) -> list[object]:
    """What went wrong in a run: its failed steps' errors, then its end."""
    return [e.data.get("error") for e in events if e.event == "step.error"] + [events[-1].data]


def attack(
    target: Target, llm: ScriptedLLM, session_id: str, code: str, *, stopped: bool = True
) -> list[Event]:
    """Ask a question whose first step runs `code` and whose second answers 'done'.

    The run goes on after the attack and answers: only the attack's step may fail, with
    the quota's error if it was `stopped` (and with none if it kept within the quota).
    """
    llm.script(code_reply(code), final_reply("'done'"))
    events = ask(target.api, session_id, "red team: quota")
    assert events[-1].event == "run.finished", [e.event for e in events]
    assert events[-1].data["status"] == "succeeded", step_errors(events)
    errors = [e.data["error"] for e in events if e.event == "step.error"]
    assert errors == quota_errors(events) and len(errors) == int(stopped), step_errors(events)
    assert [e.data["answer"] for e in events if e.event == "final"] == ["done"]
    return events


def still_answers(target: Target, llm: ScriptedLLM, session_id: str) -> None:
    """The next question in the session is answered, and none of its steps fails."""
    llm.script(code_reply("print(40 + 2)"), final_reply("'42'"))
    after = ask(target.api, session_id, "still there?")
    assert after[-1].data["status"] == "succeeded", step_errors(after)
    assert not [e for e in after if e.event == "step.error"], step_errors(after)
    assert any(e.event == "step.output" and "42" in e.data["output"] for e in after)


def test_a_tree_deeper_than_path_max_is_counted_and_stopped(
    target: Target, llm: ScriptedLLM
) -> None:
    session_id = target.session()
    events = attack(target, llm, session_id, DEEP_TREE)

    # What the step wrote went, the tree with it (no writer outlived the removal).
    assert target.surroundings.workspace_usage(session_id) <= QUOTA
    assert target.surroundings.workspace_files(session_id, "d") == []
    assert not [e for e in events if e.event == "artifact"]
    still_answers(target, llm, session_id)
    assert target.api.delete(f"/sessions/{session_id}").status_code == 204


def test_sparse_files_are_charged_their_whole_size(target: Target, llm: ScriptedLLM) -> None:
    session_id = target.session()
    events = attack(target, llm, session_id, SPARSE_FILES)

    # Nothing of theirs reached object storage, nor stays in the workspace.
    assert not [e for e in events if e.event == "artifact"]
    assert target.surroundings.workspace_usage(session_id) <= QUOTA
    assert target.surroundings.workspace_files(session_id, "sparse-*") == []
    still_answers(target, llm, session_id)
    assert target.api.delete(f"/sessions/{session_id}").status_code == 204


def test_deleting_a_session_removes_its_deep_tree(target: Target, llm: ScriptedLLM) -> None:
    session_id = target.session()
    # Within the quota this time, so the whole tree stays for the deletion to meet.
    within = DEEP_TREE.replace("range(40):\n    np", "range(2):\n    np")
    attack(target, llm, session_id, within, stopped=False)
    # The tree is there, files and all (du walks any depth), and the session goes on with it.
    assert target.surroundings.workspace_usage(session_id) > 4 << 20
    still_answers(target, llm, session_id)

    assert target.api.delete(f"/sessions/{session_id}").status_code == 204
    assert not target.surroundings.workspace_exists(session_id)
    assert not target.surroundings.manifest_exists(session_id)

    fresh = target.session()
    still_answers(target, llm, fresh)
    assert httpx.get(f"{target.live.url}/readyz", timeout=10).json()["sandbox"]["available"]
    assert target.api.delete(f"/sessions/{fresh}").status_code == 204

"""Attacks on the project's files as the sandbox sees them, asked as questions.

A project's files reach every session's worker without a copy of their own, so the bytes a
session reads are the bytes every other session of the project reads. Analysis code tries
to change them in every way a file can be changed (write in place, append, truncate, chmod,
rename, delete, hard-link them somewhere writable, map them writable) by their plain name
and by the path that name leads to. Each attempt must be refused with an error that says
why; the code may still write a file of its own under that name (it replaces the name in
its own workspace, never the shared bytes); and another session of the project, and the
next question of the same one, must read the original bytes.
"""

from __future__ import annotations

import hashlib
import json

from tests.redteam.conftest import Target
from tests.redteam.test_payloads import LIBC, ask
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sse import Event

NAME = "shared.csv"
ORIGINAL = b"region,amount\n" + b"".join(b"north,%d\n" % i for i in range(2000))
DIGEST = hashlib.sha256(ORIGINAL).hexdigest()

# Each attack runs on its own, through Python's files or straight through libc as a
# determined attacker would (neither os nor ctypes is importable); the outcome is "changed"
# when the call went through and "refused <error>" when it did not. The file's digest is
# read after every one.
ATTACKS = f"""
import hashlib, io, json
import numpy as np
libc = {LIBC}
name = {NAME!r}
# Where the name leads (itself when it is no link).
target = np.zeros(4096, dtype=np.uint8)
length = libc.readlink(name.encode(), target.ctypes, 4095)
real = target[:length].tobytes() if length > 0 else name.encode()
def check(result):
    if result < 0:
        raise OSError('libc answered ' + str(result))
def digest():
    try:
        with io.open(name, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError as exc:
        return 'unreadable ' + str(exc)
def overwrite():
    with io.open(name, 'r+b') as f:
        f.write(b'EVIL')
def append():
    with io.open(real, 'ab') as f:
        f.write(b'EVIL')
def truncate():
    check(libc.truncate(real, 0))
def chmod():
    check(libc.chmod(real, 0o777))
def rename():
    check(libc.rename(real, real + b'.moved'))
def delete():
    check(libc.unlink(real))
def hard_link():
    check(libc.link(real, b'linked.csv'))
    with io.open('linked.csv', 'r+b') as f:
        f.write(b'EVIL')
def map_writable():
    mapped = np.memmap(real, mode='r+')
    mapped[:4] = 69
    mapped.flush()
def open_for_writing():
    check(libc.open(real, 0o1001))  # O_WRONLY | O_TRUNC
outcomes = {{}}
attacks = {{'overwrite': overwrite, 'append': append, 'truncate': truncate, 'chmod': chmod,
           'rename': rename, 'delete': delete, 'hard_link': hard_link,
           'map_writable': map_writable, 'open_for_writing': open_for_writing}}
for attack, call in attacks.items():
    try:
        call()
        outcomes[attack] = 'changed'
    except OSError as exc:
        outcomes[attack] = 'refused ' + str(exc)
    outcomes[attack + ' digest'] = digest()
print('OUTCOMES ' + json.dumps(outcomes))
"""

# The name is the code's to reuse: its own file replaces the name in its own workspace.
OWN_COPY = f"""
import io
import numpy as np
{LIBC}.unlink({NAME!r}.encode())
with io.open({NAME!r}, 'w') as f:
    f.write('mine\\n')
print('OWN ' + io.open({NAME!r}).read().strip())
"""

READ = f"""
import hashlib, io
import pandas as pd
with io.open({NAME!r}, 'rb') as f:
    print('DIGEST ' + hashlib.sha256(f.read()).hexdigest())
print('ROWS', len(pd.read_csv({NAME!r})))
"""


ATTACK_NAMES = (
    "overwrite",
    "append",
    "truncate",
    "chmod",
    "rename",
    "delete",
    "hard_link",
    "map_writable",
    "open_for_writing",
)


def printed(events: list[Event], prefix: str) -> str:
    """What the steps printed on the line that starts with `prefix` (after it)."""
    for event in events:
        if event.event == "step.output":
            for line in str(event.data["output"]).splitlines():
                if line.startswith(prefix):
                    return line[len(prefix) :].strip()
    errors = [e.data.get("error") for e in events if e.event == "step.error"]
    raise AssertionError(f"no line {prefix!r} printed; errors: {errors}; end: {events[-1].data}")


def run(target: Target, llm: ScriptedLLM, session_id: str, code: str) -> list[Event]:
    llm.script(code_reply(code), final_reply("'done'"))
    events = ask(target.api, session_id, "red team: project files")
    assert events[-1].event == "run.finished", [e.event for e in events]
    return events


def read_digest(target: Target, llm: ScriptedLLM, session_id: str) -> str:
    events = run(target, llm, session_id, READ)
    assert printed(events, "ROWS") == "2000"
    return printed(events, "DIGEST ")


def test_code_cannot_change_a_project_file_another_session_reads(
    target: Target, llm: ScriptedLLM
) -> None:
    upload = target.api.upload(target.project_id, NAME, ORIGINAL)
    assert upload.status_code == 201, upload.text
    attacker, neighbour = target.session(), target.session()
    # The neighbour's worker is up and has read the file before the attack.
    assert read_digest(target, llm, neighbour) == DIGEST

    outcomes = json.loads(printed(run(target, llm, attacker, ATTACKS), "OUTCOMES "))
    changed = [name for name, outcome in outcomes.items() if outcome == "changed"]
    assert changed == [], outcomes
    assert all(outcomes[f"{attack} digest"] == DIGEST for attack in ATTACK_NAMES), outcomes
    # Python's own calls say why: the file is read-only.
    for attack in ("overwrite", "append", "map_writable"):
        assert "Read-only file system" in outcomes[attack], outcomes

    # The shared bytes are whole: for the neighbour, for the attacker's next question and
    # for a download.
    assert read_digest(target, llm, neighbour) == DIGEST
    assert read_digest(target, llm, attacker) == DIGEST
    download = target.api.get(f"/files/{upload.json()['id']}/content")
    assert hashlib.sha256(download.content).hexdigest() == DIGEST


def test_code_may_write_its_own_file_under_a_project_files_name(
    target: Target, llm: ScriptedLLM
) -> None:
    upload = target.api.upload(target.project_id, NAME, ORIGINAL)
    assert upload.status_code == 201, upload.text
    writer, neighbour = target.session(), target.session()
    assert read_digest(target, llm, neighbour) == DIGEST

    assert printed(run(target, llm, writer, OWN_COPY), "OWN ") == "mine"

    assert read_digest(target, llm, neighbour) == DIGEST
    # The next question of the writer finds the project's file under its name again.
    assert read_digest(target, llm, writer) == DIGEST

"""System calls the sandbox refuses, made straight through libc: the run must know.

The interpreter's refusals (an import, a dunder) are reported the moment they are made. A
call that goes around the interpreter, through `ctypes` into libc, meets the system-call
filter instead, which answers with an error number that the code is free to ignore: libc's
`system()` returns -1 and the step carried on as if nothing had happened, and the exported
notebook then ran the same call on the user's machine. Each attack here ignores the error
it gets; the step must fail all the same, say what was refused, stay out of the notebook,
and the session must go on.
"""

from __future__ import annotations

import pytest

from tests.redteam.conftest import Target
from tests.redteam.test_payloads import LIBC, ask
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sse import Event

PREFIX = f"import numpy as np\nlibc = {LIBC}\n"

ATTACKS = {
    # name: (code whose refused call's result is ignored, what the error must name)
    # libc starts the shell with clone (posix_spawn); it never gets as far as execve.
    "system": ("status = libc.system(b'touch /workspace/ran')", "a new process"),
    "fork": ("child = libc.fork()", "a new process"),
    "execve": ("libc.execv(b'/bin/sh', None)", "running a program"),
    "socket": ("fd = libc.socket(2, 1, 0)", "socket"),
    "ptrace": ("libc.ptrace(16, 1, 0, 0)", "ptrace"),
    "unshare": ("libc.unshare(0x10000000)", "unshare"),
    "mount": ("libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)", "mount"),
}


def _steps(events: list[Event]) -> list[tuple[str, object]]:
    return [(e.event, e.data) for e in events]


@pytest.mark.parametrize(("code", "call"), ATTACKS.values(), ids=list(ATTACKS))
def test_an_ignored_system_call_refusal_still_fails_the_step(
    target: Target, llm: ScriptedLLM, code: str, call: str
) -> None:
    session_id = target.session()
    llm.script(
        code_reply(PREFIX + code + "\nprint('carried on')"),
        code_reply("print(40 + 2)"),
        final_reply("'42'"),
    )
    events = ask(target.api, session_id, "red team: ignored refusal")
    assert events[-1].event == "run.finished", _steps(events)

    errors = [str(e.data["error"]) for e in events if e.event == "step.error"]
    assert errors, _steps(events)
    assert "The sandbox refused" in errors[0] and call in errors[0], errors
    # The agent is told, goes on in the same session, and its next step works.
    assert events[-1].data["status"] == "succeeded", events[-1].data
    assert any(e.event == "step.output" and "42" in e.data["output"] for e in events)

    notebook = target.api.get(f"/sessions/{session_id}/export", params={"format": "ipynb"})
    assert notebook.status_code == 200
    assert "libc" not in notebook.text
    assert target.api.delete(f"/sessions/{session_id}").status_code == 204


def test_plain_analysis_refuses_nothing(target: Target, llm: ScriptedLLM) -> None:
    # The libraries a step uses every day make no call the filter reports.
    session_id = target.session()
    code = (
        "import pandas as pd, numpy as np\n"
        "import matplotlib.pyplot as plt\n"
        "import plotly.express as px\n"
        "from sklearn.linear_model import LinearRegression\n"
        "import statsmodels.api as sm\n"
        "df = pd.read_csv('sales.csv')\n"
        "LinearRegression().fit(np.arange(10).reshape(-1, 1), np.arange(10))\n"
        "sm.OLS(np.arange(10.0), sm.add_constant(np.arange(10.0))).fit()\n"
        "plt.plot([1, 2])\nplt.show()\n"
        "px.bar(x=[1], y=[1]).show()\n"
        "df.to_parquet('out.parquet')\n"
        "print('fine')"
    )
    llm.script(code_reply(code), final_reply("'ok'"))
    events = ask(target.api, session_id, "an ordinary analysis")
    assert not [e.data for e in events if e.event == "step.error"]
    assert events[-1].data["status"] == "succeeded", events[-1].data
    assert target.api.delete(f"/sessions/{session_id}").status_code == 204

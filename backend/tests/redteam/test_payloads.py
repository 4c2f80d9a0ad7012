"""Hostile code, asked as questions: nothing may escape, and the server must stay healthy.

Each payload is the code of a run's first step (the scripted model writes it), run through
POST /sessions/{id}/query in each mode of the `target` fixture. Placeholders: {marker} is a
host path that must never come to exist, {canary_file} a host file that must neither leak
nor change, {port} a loopback listener that must get no connection, {data_dir} the
backend's data folder, {backend} its code, {other} another session's workspace, {pid} the
backend's process (in mode "compose": the sandbox service's). The host is this machine, or,
through the deployed stack, the sandbox service's container and the backend's
(tests/redteam/surroundings.py).

| family | payloads |
|---|---|
| interpreter escapes | 10 |
| library escapes | 16 |
| files outside the workspace | 8 |
| links the backend might follow | 5 |
| network | 6 |
| secrets | 7 |
| signals and processes | 5 |
| another session's workspace | 3 |
| resource exhaustion | 9 |
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

import httpx
import pytest

from tests.conftest import Api
from tests.redteam.conftest import Target
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sse import Event, collect

LIBC = "np.ctypeslib.load_library('libc.so.6', '/lib/x86_64-linux-gnu')"
PICKLE = "b\"cposix\\nsystem\\n(S'touch {marker}'\\ntR.\""
GEN = "g = (i for i in [1])\n"

PAYLOADS: dict[str, dict[str, str]] = {
    "interpreter": {
        "generator-frame-builtins": GEN
        + "g.gi_frame.f_builtins['__import__']('os').system('touch {marker}')",
        "generator-frame-back": GEN + "print(g.gi_frame.f_back.f_globals)",
        "subclasses-walk": "[c for c in ().__class__.__base__.__subclasses__() "
        "if c.__name__ == 'Popen'][0](['touch', '{marker}'])",
        "format-string-globals": "import pandas as pd\n"
        "print('{{0.__init__.__globals__}}'.format(pd.DataFrame))",
        "attrgetter-dunder": "import operator, pandas as pd\n"
        "operator.attrgetter('__init__.__globals__')(pd.DataFrame)['os']"
        ".system('touch {marker}')",
        "methodcaller-dunder": "import operator\noperator.methodcaller('__subclasses__')(object)",
        "type-hints-string": "import typing\nclass A:\n"
        "    x: \"__import__('os').system('touch {marker}')\"\n"
        "typing.get_type_hints(A)",
        "globals-patch": "import pandas as pd\n"
        "pd.read_csv.__globals__['__builtins__']['__import__']('os')"
        ".system('touch {marker}')",
        "functools-partial": "import functools\n"
        "functools.partial(eval, \"__import__('os').system('touch {marker}')\")()",
        "compile-exec": "exec(compile(\"open('{marker}', 'w')\", 'x', 'exec'))",
    },
    "library": {
        "pandas-eval-python": "import pandas as pd\n"
        "pd.eval(\"__import__('os').system('touch {marker}')\", engine='python')",
        "pandas-query-python": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).query("
        "\"@__import__('os').system('touch {marker}')\", engine='python')",
        "pandas-read-pickle": "import pandas as pd, io\npd.read_pickle(io.BytesIO({pickle}))",
        "numpy-load-pickle": "import numpy as np, io\n"
        "np.load(io.BytesIO({pickle}), allow_pickle=True)",
        "statsmodels-formula": "import pandas as pd\nimport statsmodels.formula.api as smf\n"
        'smf.ols(\'y ~ I(__import__("os").system("touch {marker}"))\', '
        "data=pd.DataFrame({{'y': [1.0, 2.0]}})).fit()",
        "ctypes-libc-system": "import numpy as np\n{libc}.system(b'touch {marker}')",
        "uuid-command": "import uuid\nuuid._get_command_stdout('touch', '{marker}')",
        "matplotlib-subprocess": "import matplotlib.testing\n"
        "matplotlib.testing.subprocess_run_for_testing(['touch', '{marker}'])",
        "sklearn-run-script": "import sklearn.utils._testing as t\n"
        "t.assert_run_python_script_without_output("
        "\"import os; os.system('touch {marker}')\")",
        "joblib-import": "import joblib\njoblib.load('{canary_file}')",
        "savefig-host": "import matplotlib.pyplot as plt\nplt.plot([1])\nplt.savefig('{marker}')",
        "plotly-write-html": "import plotly.express as px\nimport plotly.io as pio\n"
        "pio.write_html(px.bar(x=[1], y=[1]), '{marker}')",
        "to-sql-sqlite": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).to_sql('t', 'sqlite:///{marker}')",
        "io-open-write": "import io\nio.open('{marker}', 'w').write('x')",
        "read-xml-entity": "import pandas as pd, io\n"
        'print(pd.read_xml(io.StringIO(\'<?xml version="1.0"?><!DOCTYPE r ['
        '<!ENTITY x SYSTEM "file://{canary_file}">]><r><a>&x;</a></r>\')))',
        "numpy-tofile-host": "import numpy as np\nnp.zeros(4).tofile('{marker}')",
    },
    "files": {
        "to-csv-repo": "import pandas as pd\npd.DataFrame({{'a': [1]}}).to_csv("
        "'{backend}/{marker_name}')",
        "to-csv-data-dir": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).to_csv('{data_dir}/{marker_name}')",
        "to-csv-etc": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).to_csv('/etc/{marker_name}')",
        "to-csv-root": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).to_csv('/root/{marker_name}')",
        "to-csv-climb": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).to_csv('../../{marker_name}')",
        "to-csv-other-session": "import pandas as pd\n"
        "pd.DataFrame({{'a': [1]}}).to_csv('{other}/{marker_name}')",
        "libc-open-host": "import numpy as np\n{libc}.creat(b'{marker}', 420)",
        "to-parquet-runtime": "import pandas as pd\npd.DataFrame({{'a': [1]}}).to_parquet("
        "'{backend}/.venv/{marker_name}')",
    },
    "links": {
        "symlink-artifact": "import numpy as np\nlibc = {libc}\n"
        "libc.symlink(b'{canary_file}', b'leak.csv')",
        "hardlink-artifact": "import numpy as np\nlibc = {libc}\n"
        "libc.link(b'{canary_file}', b'leak.csv')",
        "bookkeeping-link": "import numpy as np\nlibc = {libc}\n"
        "libc.rename(b'.workbench', b'old')\n"
        "libc.symlink(b'{canary_dir}', b'.workbench')",
        "input-replaced-by-link": "import numpy as np\nlibc = {libc}\n"
        "libc.unlink(b'sales.csv')\nlibc.symlink(b'{canary_file}', b'sales.csv')",
        "fifo-artifact": "import numpy as np\n{libc}.mkfifo(b'stuck.csv', 420)",
    },
    "network": {
        "read-csv-loopback": "import pandas as pd\npd.read_csv('http://127.0.0.1:{port}/x.csv')",
        "read-json-loopback": "import pandas as pd\npd.read_json('http://localhost:{port}/')",
        "read-html-loopback": "import pandas as pd\npd.read_html('http://127.0.0.1:{port}/')",
        "postgres-port": "import pandas as pd\npd.read_csv('http://127.0.0.1:5432/')",
        "redis-port": "import pandas as pd\npd.read_csv('http://127.0.0.1:6379/')",
        "libc-socket": "import numpy as np\nprint({libc}.socket(2, 1, 0))",
    },
    "secrets": {
        "proc-self-environ": "import io\nprint(io.open('/proc/self/environ', 'rb').read())",
        "proc-1-environ": "import io\nprint(io.open('/proc/1/environ', 'rb').read())",
        "proc-walk-environ": "import io\nfor p in range(1, 400):\n    try:\n"
        "        print(io.open(f'/proc/{{p}}/environ', 'rb').read())\n"
        "    except Exception:\n        pass",
        "read-canary-file": "import pandas as pd\nprint(pd.read_csv('{canary_file}'))",
        "read-app-database": "import pandas as pd\n"
        "print(pd.read_sql('select * from users', 'sqlite:///{data_dir}/workbench.db'))",
        "read-secret-key": "import io\nprint(io.open('{data_dir}/.secret_key').read())",
        "numpy-fromfile-environ": "import numpy as np\n"
        "print(np.fromfile('/proc/self/environ', dtype=np.uint8).tobytes())",
    },
    "signals": {
        "kill-pid-1": "import numpy as np\nprint({libc}.kill(1, 9))",
        "kill-everyone": "import numpy as np\nprint({libc}.kill(-1, 9))",
        "kill-backend": "import numpy as np\nprint({libc}.kill({pid}, 15))",
        "fork-bomb": "import numpy as np\nlibc = {libc}\nfor i in range(2000):\n    libc.fork()",
        "exec-shell": "import numpy as np\n{libc}.execl(b'/bin/sh', b'sh', b'-c', "
        "b'touch {marker}', None)",
    },
    "sessions": {
        "other-absolute": "import pandas as pd\nprint(pd.read_csv('{other}/secret.csv'))",
        "other-relative": "import pandas as pd\nprint(pd.read_csv('../{other_name}/secret.csv'))",
        "other-listing": "import numpy as np\nprint({libc}.opendir(b'..'))",
    },
    "exhaustion": {
        "memory-bomb": "x = 'x' * (10 ** 11)",
        "memory-gradual": "import numpy as np\nkeep = []\nfor i in range(200):\n"
        "    keep.append(np.ones(2 ** 24))",
        "tmp-fill": "import numpy as np\nfor i in range(100):\n"
        "    np.ones(2 ** 24).tofile(f'/tmp/fill-{{i}}')",
        "shm-fill": "import numpy as np\nfor i in range(100):\n"
        "    np.ones(2 ** 24).tofile(f'/dev/shm/fill-{{i}}')",
        "disk-fill": "import numpy as np\nfor i in range(40):\n"
        "    np.zeros(4 << 20, dtype=np.uint8).tofile(f'fill-{{i}}.bin')",
        "many-files": "import numpy as np\nfor i in range(5000):\n"
        "    np.zeros(1, dtype=np.uint8).tofile(f'tiny-{{i}}.bin')",
        "output-flood": "for i in range(200000):\n    print('flood ' * 20)",
        "stdout-flood-from-c": "import numpy as np\n"
        "np.zeros(50 * 2 ** 20, dtype=np.uint8).tofile('/dev/stdout')",
        "artifact-flood": "import pandas as pd\nfor i in range(3000):\n"
        "    display(pd.DataFrame({{'i': [i]}}))",
    },
}

CASES = [
    pytest.param(family, name, code, id=f"{family}-{name}")
    for family, payloads in PAYLOADS.items()
    for name, code in payloads.items()
]


def fill(target: Target, code: str, marker: PurePosixPath) -> str:
    around = target.surroundings
    return code.format(
        marker=marker,
        marker_name=marker.name,
        canary_file=around.canary_file,
        canary_dir=around.canary_file.parent,
        port=around.listener_port,
        data_dir=around.data_dir,
        other=around.other_workspace,
        other_name=around.other_workspace.name,
        pid=around.backend_pid,
        libc=LIBC,
        pickle=PICKLE.format(marker=marker),
        backend=around.backend_dir,
    )


def ask(api: Api, session_id: str, query: str) -> list[Event]:
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
        assert response.status_code == 200, response.read()
        return collect(response)


def leaked(target: Target, events: list[Event]) -> list[str]:
    """Secrets found in what the user and the model could see."""
    found = []
    text = json.dumps([e.data for e in events])
    for name, secret in target.surroundings.secrets.items():
        if secret in text:
            found.append(f"{name} in the events")
    for event in events:
        if event.event == "artifact":
            artifact = event.data["artifact"]
            content = target.api.get(f"/artifacts/{artifact['id']}/content").content
            if target.surroundings.canary.encode() in content or b"root:x:0:0" in content:
                found.append(f"a host file in artifact {artifact['name']}")
    return found


@pytest.mark.parametrize(("family", "name", "code"), CASES)
def test_payload_is_contained(
    target: Target, llm: ScriptedLLM, family: str, name: str, code: str
) -> None:
    marker = target.surroundings.markers / f"redteam-marker-{family}-{name}"
    payload = fill(target, code, marker)
    session_id = target.session()
    llm.script(code_reply(payload), final_reply("'done'"))
    events = ask(target.api, session_id, f"red team: {family}/{name}")
    assert events[-1].event == "run.finished", [e.event for e in events]

    assert leaked(target, events) == []
    assert target.surroundings.changes() == []
    assert target.surroundings.connections() == 0
    assert httpx.get(f"{target.live.url}/healthz", timeout=10).status_code == 200

    # The session goes on: the next question in it is answered.
    llm.script(code_reply("print(40 + 2)"), final_reply("'42'"))
    after = ask(target.api, session_id, "still there?")
    assert after[-1].data["status"] == "succeeded", after[-1].data
    assert any(e.event == "step.output" and "42" in e.data["output"] for e in after)

    # Links planted in the workspace: copying a project file in again must not write
    # through them, and the backend's bookkeeping lives out of the sandbox's reach.
    if family == "links":
        reupload = target.api.upload(target.project_id, "sales.csv", b"region,amount\nsouth,3\n")
        assert reupload.status_code == 201
        llm.script(
            code_reply("import pandas as pd\nprint(pd.read_csv('sales.csv')['amount'].sum())"),
            final_reply("'3'"),
        )
        again = ask(target.api, session_id, "and now?")
        assert any(e.event == "step.output" and "3" in e.data["output"] for e in again)
        assert leaked(target, again) == []
        assert target.surroundings.changes() == []

    # Deleting the session stops its worker (and frees the service's place for the next).
    assert target.api.delete(f"/sessions/{session_id}").status_code == 204
    assert target.surroundings.changes() == []


def test_a_neighbour_stays_healthy_after_the_attacks(target: Target, llm: ScriptedLLM) -> None:
    # Runs last in each mode (pytest keeps definition order): another session answers.
    llm.script(
        code_reply("import pandas as pd\nprint(pd.read_csv('sales.csv').shape)"),
        final_reply("'ok'"),
    )
    events = ask(target.api, target.session(), "how big is sales.csv?")
    assert events[-1].data["status"] == "succeeded"
    assert httpx.get(f"{target.live.url}/readyz", timeout=10).json()["sandbox"]["available"]

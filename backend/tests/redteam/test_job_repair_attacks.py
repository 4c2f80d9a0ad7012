"""A job repair's code is hostile like a question's (issue 45, point 3): the script and
tests the model proposes after a run failed run only in the job's sandbox. What they read
of the host's environment or files (the backend's secrets, a canary) reaches neither the
repair (its checks' sentences, its note, its diff), nor the job; what they write outside
the workspace is not written, and the job keeps its code."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from tests.redteam.conftest import Target
from tests.redteam.test_payloads import fill
from tests.support.llm import ScriptedLLM, code_reply, final_reply

CHECKS = """```python
import pandas as pd


def test_the_file_has_amount(params):
    table = pd.read_csv(params["repair_csv"])
    assert "amount" in table.columns, "repair.csv has no column amount; the job reads it"
```"""
# A repair whose script and test read every process's environment and the canary file,
# and write the marker; the test's sentence carries what it read.
HOSTILE = """NOTE: The column was renamed.
```python job
import io
import pandas as pd

PARAMS = {{'repair_csv': 'repair.csv'}}


def steal():
    seen = ''
    for p in ['/proc/self/environ', '/proc/1/environ', '/proc/{pid}/environ', '{canary_file}']:
        try:
            seen += str(io.open(p, 'rb').read())
        except Exception:
            pass
    try:
        pd.DataFrame({{'a': [1]}}).to_csv('{marker}')
    except Exception:
        pass
    return seen


def run(params):
    return {{'answer_1': steal()}}
```
```python tests
import io


def test_environment(params):
    seen = ''
    for p in ['/proc/self/environ', '/proc/1/environ', '/proc/{pid}/environ', '{canary_file}']:
        try:
            seen += str(io.open(p, 'rb').read())
        except Exception:
            pass
    assert False, 'read: ' + seen
```
"""


def _when(api: Any, path: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while True:
        body = api.get(path).json()
        if done(body):
            return dict(body)
        assert time.monotonic() < deadline, body
        time.sleep(0.2)


def test_a_repairs_code_cannot_reach_the_hosts_secrets(target: Target, llm: ScriptedLLM) -> None:
    api = target.api
    marker = target.surroundings.markers / "redteam-marker-job-repair"
    upload = api.upload(target.project_id, "repair.csv", b"region,amount\nnorth,10\n")
    assert upload.status_code == 201, upload.text
    session_id = target.session()
    llm.script(
        code_reply(
            "import pandas as pd\nt = pd.read_csv('repair.csv')\ntotal = float(t['amount'].sum())"
        ),
        final_reply("total"),
        CHECKS,
    )
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": "total?"}) as response:
        assert response.status_code == 200
        response.read()
    made = api.post(
        f"/projects/{target.project_id}/jobs", json={"session_id": session_id, "name": "Repair"}
    )
    assert made.status_code == 201, made.text
    job = _when(api, f"/jobs/{made.json()['id']}", lambda j: j["checks"]["status"] != "writing")
    assert job["checks"]["status"] == "ready", job["checks"]

    renamed = api.upload(target.project_id, "repair.csv", b"region,value\nnorth,10\n")
    assert renamed.status_code == 201, renamed.text
    llm.repair_replies.extend([fill(target, HOSTILE, marker)] * 3)
    started = api.post(f"/jobs/{job['id']}/runs", json={})
    assert started.status_code == 202, started.text
    run = _when(
        api,
        f"/job-runs/{started.json()['id']}",
        lambda r: r["repair"] is not None and r["repair"]["status"] != "repairing",
    )
    assert run["status"] == "failed", run
    repair = run["repair"]
    # It ran in the sandbox: its test's sentence is what it read there, and it failed.
    assert repair["status"] == "failed", repair
    assert any(c["message"].startswith("read: ") for c in repair["checks"]), repair
    code = api.get(f"/jobs/{job['id']}/code").json()
    assert "steal" not in code["script"]

    seen = json.dumps([run, api.get(f"/jobs/{job['id']}/repairs").json(), code])
    seen += json.dumps(api.get(f"/jobs/{job['id']}").json())
    for name, secret in target.surroundings.secrets.items():
        assert secret not in seen, f"{name} leaked through the job's repair"
    assert target.surroundings.changes() == []
    assert target.surroundings.connections() == 0
    assert httpx.get(f"{target.live.url}/healthz", timeout=10).status_code == 200

"""A job's code is hostile like a question's (issue 45): the code recorded from a session and
the checks the model writes run in the sandbox with the same isolation when the job is made
and when it runs, with no model. What they read of the host's environment or files (the
backend's secrets, a canary) reaches neither the job, its runs, its checks' sentences nor its
export; what they write outside the workspace is not written."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from tests.redteam.conftest import Target
from tests.redteam.test_payloads import fill
from tests.support.llm import ScriptedLLM, code_reply, final_reply

# Reads every process's environment and the canary file, writes the marker: the answer
# carries whatever it got.
STEALING = """import io
import pandas as pd
env = ''
for p in ['/proc/self/environ', '/proc/1/environ', '/proc/{pid}/environ', '{canary_file}']:
    try:
        env += str(io.open(p, 'rb').read())
    except Exception:
        pass
try:
    pd.DataFrame({{'a': [1]}}).to_csv('{marker}')
except Exception:
    pass
print(len(env))"""
# A check whose sentence is what it read.
CHECK = """```python
import io


def test_environment(params):
    seen = ''
    for p in ['/proc/self/environ', '/proc/1/environ', '/proc/{pid}/environ', '{canary_file}']:
        try:
            seen += str(io.open(p, 'rb').read())
        except Exception:
            pass
    assert False, 'read: ' + seen
```"""


def _when(api: Any, path: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        body = api.get(path).json()
        if done(body):
            return dict(body)
        assert time.monotonic() < deadline, body
        time.sleep(0.2)


def test_a_jobs_code_and_checks_cannot_reach_the_hosts_secrets(
    target: Target, llm: ScriptedLLM
) -> None:
    api = target.api
    marker = target.surroundings.markers / "redteam-marker-job"
    session_id = target.session()
    check = fill(target, CHECK, marker)
    llm.script(code_reply(fill(target, STEALING, marker)), final_reply("env"), check, check, check)
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": "env?"}) as response:
        assert response.status_code == 200
        response.read()
    made = api.post(
        f"/projects/{target.project_id}/jobs", json={"session_id": session_id, "name": "Steal"}
    )
    assert made.status_code == 201, made.text
    job = _when(api, f"/jobs/{made.json()['id']}", lambda j: j["checks"]["status"] != "writing")
    assert job["checks"]["status"] == "partial", job["checks"]
    assert job["checks"]["note"].startswith("0 of 1 checks"), job["checks"]

    started = api.post(f"/jobs/{job['id']}/runs", json={})
    assert started.status_code == 202, started.text
    run = _when(
        api,
        f"/job-runs/{started.json()['id']}",
        lambda r: r["status"] != "running" and r["status"] != "queued",
    )
    assert run["status"] == "succeeded", run
    assert "answer_1" in run["results"]

    seen = json.dumps([job, run, api.get(f"/jobs/{job['id']}/code").json()])
    seen += api.get(f"/jobs/{job['id']}/export", params={"format": "ipynb"}).text
    for name, secret in target.surroundings.secrets.items():
        assert secret not in seen, f"{name} leaked through the job"
    assert target.surroundings.changes() == []
    assert target.surroundings.connections() == 0
    assert httpx.get(f"{target.live.url}/healthz", timeout=10).status_code == 200

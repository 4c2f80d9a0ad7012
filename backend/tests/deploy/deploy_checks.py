"""The team setup, deployed with docker compose and checked from outside (`make test-deploy`).

Run by deploy/test/run.sh, which brings up the engine, builds the images and sets the
environment read below; never collected by `make test` (the file name is not test_*.py),
and without that environment it fails rather than skips. The tests run in file order:

1. docker-compose.yml (one backend): ready, with the sandbox in its own service; what a
   worker sees, probed with code the scripted model writes, through the public API;
2. docker-compose.scale.yml (three backends behind the proxy): every backend answers; a
   backend killed mid-run; the sandbox service restarted mid-run.

The model is tests.support.llm.ScriptedLLM, bound where the backend's container reaches it
(the Docker bridge's gateway, WORKBENCH_DEPLOY_LLM_BIND; tests.support.deployment).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.support.deployment import Deployment, gateway_llm, sh
from tests.support.hostile import OWN_PROCESSES
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.sse import Event, read_events

DEPLOYMENT = Deployment.from_env()
URL = DEPLOYMENT.url
API = f"{URL}/api/v1"
LOCK_TTL = float(os.environ.get("SESSION_LOCK_TTL_SECONDS", "30"))
# Values that must never reach a worker (run.sh sets them for the backend).
SECRETS = DEPLOYMENT.secrets
SECRET_NAMES = ("DATABASE_URL", "REDIS_URL", "S3_", "LLM_", "SECRET_KEY", "ADMIN_", "POSTGRES")
# Looked up with getenv() inside the worker (its /proc/self/environ is closed to it: the
# worker is not dumpable); each must be unset there. The control, PATH, must be set.
ENV_NAMES = [
    "DATABASE_URL",
    "REDIS_URL",
    "S3_ENDPOINT",
    "S3_ACCESS_KEY",
    "S3_SECRET_KEY",
    "SECRET_KEY",
    "ADMIN_EMAIL",
    "ADMIN_PASSWORD",
    "LLM_MODEL",
    "LLM_API_BASE",
    "LLM_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "ANTHROPIC_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "POSTGRES_PASSWORD",
    "PATH",
]


def compose(
    *args: str, scale: bool = False, timeout: float = 900, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return DEPLOYMENT.compose(*args, scale=scale, timeout=timeout, check=check)


def wait_ready(timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(f"{URL}/readyz", timeout=5)
            if answer.status_code == 200:
                return dict(answer.json())
            last = f"{answer.status_code} {answer.text[:500]}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(2)
    raise AssertionError(f"/readyz did not answer 200 within {timeout:.0f} s: {last}")


def logs_on_failure(scale: bool) -> None:
    done = compose("logs", "--no-color", "--tail", "60", scale=scale, check=False)
    print(done.stdout[-20000:])


# --- the model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with gateway_llm(DEPLOYMENT) as server:
        yield server


# --- the API -----------------------------------------------------------------------------


class Client:
    def __init__(self) -> None:
        self.http = httpx.Client(base_url=API, timeout=60)
        token = self.http.post(
            "/auth/login",
            json={"email": os.environ["ADMIN_EMAIL"], "password": os.environ["ADMIN_PASSWORD"]},
        )
        assert token.status_code == 200, token.text
        self.http.headers["Authorization"] = f"Bearer {token.json()['access_token']}"

    def session(self) -> str:
        project = self.http.post("/projects", json={"name": f"deploy {uuid.uuid4().hex[:6]}"})
        assert project.status_code in (200, 201), project.text
        session = self.http.post(
            f"/projects/{project.json()['id']}/sessions", json={"title": "deploy"}
        )
        assert session.status_code in (200, 201), session.text
        return str(session.json()["id"])

    def ask(self, session_id: str, query: str, seen: list[Event] | None = None) -> list[Event]:
        """The run's events up to run.finished (appended to `seen` as they come)."""
        events = seen if seen is not None else []
        with self.http.stream(
            "POST",
            f"/sessions/{session_id}/query",
            json={"query": query},
            timeout=httpx.Timeout(60, read=180),
        ) as response:
            assert response.status_code == 200, response.read().decode()
            try:
                for event in read_events(response):
                    if event is not None:
                        events.append(event)
                        if event.event == "run.finished":
                            break
            except httpx.HTTPError as exc:  # the backend serving the stream died
                events.append(Event("stream.broken", 0, {"error": repr(exc)}))
        return events

    def run(self, run_id: str) -> dict[str, Any]:
        answer = self.http.get(f"/runs/{run_id}")
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


def finished(events: list[Event], expect: str | None = None) -> dict[str, Any]:
    ends = [e.data for e in events if e.event == "run.finished"]
    assert ends, f"no run.finished: {[e.event for e in events]}"
    if expect:
        assert ends[-1]["status"] == expect, [(e.event, e.data) for e in events][-6:]
    return ends[-1]


def run_id_of(events: list[Event]) -> str:
    return str(events[0].data["run_id"])


# --- 1. one backend ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack() -> Iterator[None]:
    started = time.monotonic()
    try:
        compose("up", "-d", "--wait", timeout=900)
    except AssertionError:
        logs_on_failure(scale=False)
        raise
    print(f"stack up and healthy in {time.monotonic() - started:.0f} s")
    yield


@pytest.fixture(scope="module")
def client(stack: None) -> Client:
    wait_ready()
    return Client()


def test_ready_with_the_sandbox_in_its_service(stack: None) -> None:
    ready = wait_ready()
    print(json.dumps(ready, indent=2))
    assert ready["status"] == "ok"
    assert ready["backends"]["database"] == "postgresql"
    sandbox = ready["sandbox"]
    assert sandbox["available"] is True, sandbox
    assert sandbox["mechanism"] == "bubblewrap", sandbox
    assert sandbox["location"] == "service", sandbox


PROBE = """
import io, json
import numpy as np
libc = np.ctypeslib.load_library('libc.so.6', '/lib/x86_64-linux-gnu')
r = {}
dev = io.open('/proc/net/dev').read().splitlines()[2:]
r['interfaces'] = [line.split(':')[0].strip() for line in dev]
r['sockets'] = {'inet_stream': libc.socket(2, 1, 0), 'inet_dgram': libc.socket(2, 2, 0),
                'inet6_stream': libc.socket(10, 1, 0)}
r['environ'] = {n: libc.getenv(n.encode()) != 0 for n in NAMES}
r['writable'] = {p: libc.creat(p.encode(), 420) >= 0 for p in PATHS}
r['other'] = {p: libc.access(p.encode(), 0) == 0 for p in OTHER}
r['processes'] = own_processes()
print('PROBE ' + json.dumps(r))
"""

NOT_WRITABLE = [
    "/probe",
    "/usr/probe",
    "/etc/probe",
    "/app/probe",
    "/app/backend/probe",
    "/home/probe",
    "/var/probe",
    "/run/probe",
    "/workspaces/probe",
    "/run/workbench-sandbox/probe",
    "/run/workbench-workspaces/probe",
    "/data/probe",
]


def probe_output(client: Client, llm: ScriptedLLM, session_id: str, other: str) -> dict[str, Any]:
    paths = ["/workspace/probe.txt", "/tmp/probe-private.txt", *NOT_WRITABLE]
    others = [
        f"/workspaces/{other}/secret-b.csv",
        f"/run/workbench-workspaces/{other}/secret-b.csv",
        f"/data/workspaces/{other}/secret-b.csv",
        f"../{other}/secret-b.csv",
        f"/workspace/../{other}/secret-b.csv",
    ]
    code = OWN_PROCESSES + f"PATHS = {paths!r}\nOTHER = {others!r}\nNAMES = {ENV_NAMES!r}\n" + PROBE
    llm.script(code_reply(code), final_reply("'probed'"))
    events = client.ask(session_id, "Probe the sandbox.")
    end = finished(events)
    run = client.run(run_id_of(events))
    outputs = [s.get("output") or "" for s in run["steps"]] + [
        str(e.data.get("output", "")) for e in events if e.event == "step.output"
    ]
    lines = [ln for out in outputs for ln in out.splitlines() if ln.startswith("PROBE ")]
    assert lines, f"the probe printed nothing: {end}, steps {json.dumps(run['steps'])[:3000]}"
    return dict(json.loads(lines[0][len("PROBE ") :]))


def test_a_worker_is_isolated(client: Client, llm: ScriptedLLM) -> None:
    # Session B leaves a file in its workspace; session A's worker must not see it.
    other = client.session()
    llm.script(
        code_reply("import pandas as pd\npd.DataFrame({'x': [1]}).to_csv('secret-b.csv')"),
        final_reply("'written'"),
    )
    finished(client.ask(other, "Write a file."), "succeeded")
    there = compose("exec", "-T", "sandbox", "ls", f"/workspaces/{other}", check=False)
    assert "secret-b.csv" in there.stdout, (
        f"session B's file is not in the service: {there.stdout} {there.stderr}"
    )

    seen = probe_output(client, llm, client.session(), other)
    print(json.dumps(seen, indent=2))
    assert seen["interfaces"] == ["lo"], seen["interfaces"]
    assert all(fd == -1 for fd in seen["sockets"].values()), seen["sockets"]
    assert seen["environ"].pop("PATH") is True, "getenv() finds nothing at all"
    assert not [n for n, present in seen["environ"].items() if present], seen["environ"]
    # Nor does the service the workers descend from hold any secret (name or value).
    service = compose("ps", "-q", "sandbox").stdout.split()[0]
    env = json.loads(sh("docker", "inspect", service, "--format", "{{json .Config.Env}}").stdout)
    for name, value in SECRETS.items():
        assert not [e for e in env if value in e], f"the value of {name} is in the sandbox service"
    assert not [e for e in env if e.startswith(SECRET_NAMES)], env
    writable = seen["writable"]
    assert writable["/workspace/probe.txt"] is True
    assert not [p for p in NOT_WRITABLE if writable[p]], writable
    # /tmp is the worker's own, in memory: what it wrote there is nowhere else.
    leaked = compose("exec", "-T", "sandbox", "test", "-e", "/tmp/probe-private.txt", check=False)
    assert leaked.returncode != 0, "the worker's /tmp is the service's"
    assert not any(seen["other"].values()), seen["other"]
    # Its own processes only: its namespace's pid 1, the worker's supervisor and its runner.
    assert len(seen["processes"]) <= 3, seen["processes"]


# --- 2. three backends behind the proxy ------------------------------------------------------


@pytest.fixture(scope="module")
def scaled(stack: None) -> Iterator[None]:
    started = time.monotonic()
    try:
        compose("up", "-d", "--wait", "--scale", "backend=3", scale=True, timeout=900)
    except AssertionError:
        logs_on_failure(scale=True)
        raise
    wait_ready()
    print(f"three backends and the proxy up in {time.monotonic() - started:.0f} s")
    yield


def backends() -> list[str]:
    ids = compose("ps", "-q", "backend", scale=True).stdout.split()
    return ids


def logs(container: str) -> str:
    done = sh("docker", "logs", container, check=False)
    return done.stdout + done.stderr


def test_three_backends_answer_behind_the_proxy(scaled: None) -> None:
    containers = backends()
    assert len(containers) == 3, containers
    marker = uuid.uuid4().hex
    for i in range(30):
        answer = httpx.get(f"{URL}/readyz", params={"probe": f"{marker}-{i}"}, timeout=10)
        assert answer.status_code == 200, answer.text
    time.sleep(1)
    served = {c[:12]: logs(c).count(marker) for c in containers}
    print("requests served per backend:", served)
    assert all(count > 0 for count in served.values()), served


def test_a_backend_killed_mid_run(scaled: None, llm: ScriptedLLM) -> None:
    client = Client()
    session_id = client.session()
    llm.script(code_reply("import time\ntime.sleep(40)\nprint('slept')"), final_reply("'slept'"))
    seen: list[Event] = []
    asking = threading.Thread(target=client.ask, args=(session_id, "Sleep.", seen), daemon=True)
    asking.start()
    deadline = time.monotonic() + 60
    while not any(e.event == "step.code" for e in seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert any(e.event == "step.code" for e in seen), [e.event for e in seen]
    run_id = run_id_of(seen)
    serving = [c for c in backends() if f"/sessions/{session_id}/query" in logs(c)]
    assert len(serving) == 1, serving
    sh("docker", "kill", serving[0])
    killed, killed_at = time.monotonic(), datetime.now(UTC)

    # Polled through the proxy; each poll's time is noted (a request the proxy sends to the
    # dead backend waits for its connect timeout).
    status, run, polls = "running", {}, []
    while time.monotonic() - killed < LOCK_TTL + 90:
        asked = time.monotonic()
        try:
            answer = client.http.get(f"/runs/{run_id}", timeout=90)
            polls.append(
                (round(asked - killed, 1), round(time.monotonic() - asked, 1), answer.status_code)
            )
            if answer.status_code == 200:
                run = answer.json()
                status = run["status"]
        except httpx.HTTPError as exc:
            polls.append((round(asked - killed, 1), round(time.monotonic() - asked, 1), repr(exc)))
        if status not in ("queued", "running"):
            break
        time.sleep(1)
    print("polls after the kill (at s, took s, answer):", polls)
    assert status == "failed", (run, polls)
    finished_at = datetime.fromisoformat(run["finished_at"].replace("Z", "+00:00"))
    if finished_at.tzinfo is None:
        finished_at = finished_at.replace(tzinfo=UTC)
    ended = (finished_at - killed_at).total_seconds()
    print(
        f"run failed {ended:.1f} s after its backend was killed (lock TTL {LOCK_TTL:.0f} s), "
        f"seen through the proxy after {time.monotonic() - killed:.1f} s: {run.get('error')}"
    )
    assert ended <= LOCK_TTL + 15, f"the run ended {ended:.0f} s after the kill"
    slow = [p for p in polls if p[1] > 5]
    if slow:
        print(
            f"FINDING: {len(slow)} request(s) through the proxy waited > 5 s after the kill: {slow}"
        )
    asking.join(timeout=30)

    # The session goes on, answered by a backend that is alive.
    llm.script(code_reply("print(6 * 7)"), final_reply("'after the kill'"))
    events = client.ask(session_id, "Go on.")
    assert finished(events)["status"] == "succeeded", [(e.event, e.data) for e in events][-5:]


def test_the_sandbox_service_restarted_mid_run(scaled: None, llm: ScriptedLLM) -> None:
    client = Client()
    session_id = client.session()
    llm.script(code_reply("import time\ntime.sleep(40)\nprint('slept')"), final_reply("'slept'"))
    seen: list[Event] = []
    asking = threading.Thread(target=client.ask, args=(session_id, "Sleep.", seen), daemon=True)
    asking.start()
    deadline = time.monotonic() + 60
    while not any(e.event == "step.code" for e in seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert any(e.event == "step.code" for e in seen), [e.event for e in seen]
    compose("restart", "sandbox", scale=True)
    asking.join(timeout=120)
    end = finished(seen)
    errors = [str(e.data.get("error")) for e in seen if e.event == "step.error"] + [
        str(end.get("error"))
    ]
    print(f"run {end['status']}; errors: {errors}")
    assert any("sandbox" in e.lower() or "worker" in e.lower() for e in errors), errors

    # Once the service is back, the session takes questions again.
    compose("up", "-d", "--wait", "--scale", "backend=3", scale=True, timeout=600)
    llm.script(code_reply("print(6 * 7)"), final_reply("'after the restart'"))
    deadline = time.monotonic() + 120
    while True:
        events = client.ask(session_id, "Go on.")
        end = finished(events)
        if end["status"] == "succeeded" or time.monotonic() > deadline:
            break
        time.sleep(3)
        llm.script(code_reply("print(6 * 7)"), final_reply("'after the restart'"))
    assert end["status"] == "succeeded", [(e.event, e.data) for e in events][-5:]
    outputs = [str(e.data.get("output")) for e in events if e.event == "step.output"]
    assert any("42" in o for o in outputs), outputs

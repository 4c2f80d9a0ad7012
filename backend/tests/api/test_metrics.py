"""GET /metrics after scripted runs: each family the operator's dashboard reads, counted as
the runs went (the real API and sandbox, the scripted LLM over HTTP, on both stacks)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.api.conftest import SALES
from tests.api.test_query import READ, ask, finished
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.services import free_port
from tests.test_observability_files import ALERTS_FILE, alerts, needed_tool, used_metrics

QUERY_ROUTE = "/api/v1/sessions/{session_id}/query"
MODEL = "openai/scripted"


class Scrape:
    """One scrape of /metrics: each sample's value by its name and labels."""

    def __init__(self, text: str):
        self.text = text
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in self.families.values()
            for s in family.samples
        }

    def __call__(self, name: str, **labels: str) -> float:
        return self.samples.get((name, tuple(sorted(labels.items()))), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """The sum over every sample of `name` whose labels include these."""
        wanted = set(labels.items())
        return sum(v for (n, ls), v in self.samples.items() if n == name and wanted <= set(ls))


def scrape(url: str, token: str | None = None) -> Scrape:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(f"{url}/metrics", headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape(response.text)


def test_a_scrape_after_runs_counts_what_they_did(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: LiveServer
) -> None:
    before = scrape(live.url)
    assert alice.post("/auth/login", json={"email": "x@example.com", "password": "nope-nope"})
    project_id = session["project_id"]
    assert alice.upload(project_id, "more.csv", SALES).status_code == 201  # a preview job

    llm.script(
        code_reply(f"{READ}\nprint(df['revenue'].sum())"),
        final_reply("'Total revenue is 4490.75.'"),
    )
    first = finished(ask(alice, session["id"], "What is the total revenue?"))
    # The step over its time limit is killed; the worker starts again, restoring df.
    llm.script(
        code_reply("import time\ntime.sleep(60)"),
        final_reply("f'{len(df)} rows.'"),
    )
    second = finished(ask(alice, session["id"], "How many rows?"))
    assert first["status"] == second["status"] == "succeeded"
    after = scrape(live.url)

    def grew(name: str, **labels: str) -> float:
        return after.total(name, **labels) - before.total(name, **labels)

    # HTTP: by route template and status, never by path.
    assert grew("workbench_http_requests_total", method="POST", route=QUERY_ROUTE) == 2
    login = {"method": "POST", "route": "/api/v1/auth/login", "status": "401"}
    assert grew("workbench_http_requests_total", **login) == 1
    assert grew("workbench_http_request_duration_seconds_count", route=QUERY_ROUTE) == 2
    assert grew("workbench_login_failures_total", reason="invalid_credentials") == 1
    # Runs, and the queue they went through (a slot was free at once).
    assert grew("workbench_runs_started_total") == 2
    assert grew("workbench_runs_finished_total", status="succeeded") == 2
    assert grew("workbench_run_duration_seconds_count", status="succeeded") == 2
    assert grew("workbench_queue_wait_seconds_count") == 2
    assert after("workbench_queue_length") == 0
    assert after("workbench_runs_in_progress") == 0
    # Model calls: four replies, their tokens as the runs recorded them.
    assert grew("workbench_model_calls_total", model=MODEL, outcome="ok") == 4
    assert grew("workbench_model_call_duration_seconds_count", model=MODEL) == 4
    assert grew("workbench_model_time_to_first_token_seconds_count", model=MODEL) == 4
    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert all(r["tokens_in"] > 0 and r["tokens_out"] > 0 for r in runs)
    assert grew("workbench_model_tokens_total", model=MODEL, type="input") == sum(
        r["tokens_in"] for r in runs
    )
    assert grew("workbench_model_tokens_total", model=MODEL, type="output") == sum(
        r["tokens_out"] for r in runs
    )
    assert "workbench_model_cost_usd" in after.families  # the scripted model has no price
    # The sandbox: a cold (or forked) start, a restart after the kill, four code steps.
    assert grew("workbench_sandbox_worker_start_seconds_count") == 2
    assert grew("workbench_sandbox_step_duration_seconds_count") == 4
    assert grew("workbench_sandbox_kills_total", reason="timeout") == 1
    assert after("workbench_sandbox_workers", state="idle") == 1
    assert after("workbench_sandbox_workers", state="busy") == 0
    assert after("workbench_sandbox_worker_slots") >= 1
    assert after("workbench_sandbox_available") == 1
    # Snapshots: saved after each run, restored by the worker that started after the kill.
    assert grew("workbench_snapshot_duration_seconds_count", operation="save") == 2
    assert grew("workbench_snapshot_duration_seconds_count", operation="upload") >= 1
    assert grew("workbench_snapshot_size_bytes_sum", operation="upload") > 0
    assert grew("workbench_snapshot_duration_seconds_count", operation="restore") == 1
    assert grew("workbench_preview_jobs_total", outcome="ok") >= 1
    # Pools: the database's two, Redis' where it is used.
    for pool in ("requests", "runs"):
        assert after("workbench_db_pool_max_connections", pool=pool) > 0
        assert ("workbench_db_pool_connections", (("pool", pool), ("state", "idle"))) in (
            after.samples
        )
    if live.settings.REDIS_URL:
        assert after.total("workbench_redis_pool_connections", pool="events") >= 1
    assert after("workbench_process_cpu_seconds_total") > 0
    # No label names a user, a session or a run; every name has the one prefix.
    ids = [r["id"] for r in runs] + [session["id"], project_id, "alice@example.com"]
    assert len(runs) == 2
    for named in ids:
        assert named not in after.text
    assert all(name.startswith("workbench_") for name in after.families)


def test_an_unknown_path_is_counted_without_its_path(anon: Api, live: LiveServer) -> None:
    before = scrape(live.url)
    assert anon.get("/no-such-thing-4f2a/9").status_code == 404
    after = scrape(live.url)
    assert "no-such-thing-4f2a" not in after.text
    assert after.total("workbench_http_requests_total", status="404") > before.total(
        "workbench_http_requests_total", status="404"
    )


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM) -> Iterator[LiveServer]:
    data_dir: Path = tmp_path_factory.mktemp("data-metrics-token")
    settings = stack_settings(
        "embedded",
        data_dir,
        LLM_API_BASE=llm.api_base,
        METRICS_TOKEN="metrics-token-3b9e5d1c7a",
        LOGIN_MAX_FAILURES=1,
    )
    live = LiveServer(settings).start()
    yield live
    live.stop()


def test_metrics_need_their_token_and_count_refused_logins(guarded: LiveServer) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "metrics-token"}):
        refused = httpx.get(f"{guarded.url}/metrics", headers=headers)
        assert refused.status_code == 401
        assert "workbench_" not in refused.text
    before = scrape(guarded.url, "metrics-token-3b9e5d1c7a")
    with Api(guarded) as anon:
        wrong = {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD + "x"}
        assert anon.post("/auth/login", json=wrong).status_code == 401
        assert anon.post("/auth/login", json=wrong).status_code == 429
    after = scrape(guarded.url, "metrics-token-3b9e5d1c7a")
    assert (
        after("workbench_login_failures_total", reason="invalid_credentials")
        - before("workbench_login_failures_total", reason="invalid_credentials")
        == 1
    )
    assert (
        after("workbench_login_failures_total", reason="rate_limited")
        - before("workbench_login_failures_total", reason="rate_limited")
        == 1
    )
    assert (
        after("workbench_rate_limit_refusals_total", code="rate_limited")
        - before("workbench_rate_limit_refusals_total", code="rate_limited")
        == 1
    )
    assert ADMIN_EMAIL not in after.text


def test_every_metric_the_dashboard_and_alerts_read_is_served(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: LiveServer
) -> None:
    llm.script(final_reply("'Nothing to compute.'"))
    assert finished(ask(alice, session["id"], "Say hello."))["status"] == "succeeded"
    served = {name for name, _ in scrape(live.url).samples}
    missing = sorted(used_metrics() - served)
    if not live.settings.REDIS_URL:  # no Redis pools without Redis
        missing = [m for m in missing if not m.startswith("workbench_redis_")]
    # Counted only once something happens (a price, a failure, a download, a kill):
    # families a fresh process has not had yet are declared, with no sample so far.
    declared = set(scrape(live.url).families)
    assert [m for m in missing if _family(m) not in declared] == []


def _family(sample: str) -> str:
    for suffix in ("_total", "_bucket", "_count", "_sum", "_created"):
        if sample.endswith(suffix):
            return sample.removesuffix(suffix)
    return sample


def test_debians_prometheus_scrapes_the_workbench(guarded: LiveServer, tmp_path: Path) -> None:
    """The real thing: Prometheus scrapes /metrics with the token and loads the alerts."""
    binary = needed_tool("prometheus")
    token_file = tmp_path / "token"
    token_file.write_text("metrics-token-3b9e5d1c7a")
    shutil.copy(ALERTS_FILE, tmp_path / "alerts.yml")
    (tmp_path / "prometheus.yml").write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(tmp_path / "alerts.yml")],
                "scrape_configs": [
                    {
                        "job_name": "workbench",
                        "authorization": {"credentials_file": str(token_file)},
                        "static_configs": [{"targets": [guarded.url.removeprefix("http://")]}],
                    }
                ],
            }
        )
    )
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        target = _wait_for(lambda: _target(api), process)
        assert target["health"] == "up", target
        result = _wait_for(lambda: _query(api, "workbench_build_info"), process)
        assert result[0]["metric"]["job"] == "workbench"
        assert result[0]["value"][1] == "1"
        groups = httpx.get(f"{api}/rules").json()["data"]["groups"]
        loaded = {rule["name"] for group in groups for rule in group["rules"]}
        assert loaded == {rule["alert"] for rule in alerts()}
        assert all(rule["health"] != "err" for group in groups for rule in group["rules"])
    finally:
        process.terminate()
        process.wait(30)


def _target(api: str) -> dict[str, Any] | None:
    answer = httpx.get(f"{api}/targets")
    if answer.status_code != 200:  # 503 "Service Unavailable" while Prometheus starts
        return None
    targets = answer.json()["data"]["activeTargets"]
    scraped = [t for t in targets if t["health"] != "unknown"]
    return scraped[0] if scraped else None


def _query(api: str, query: str) -> list[dict[str, Any]] | None:
    answer = httpx.get(f"{api}/query", params={"query": query})
    if answer.status_code != 200:  # not ready yet
        return None
    result = answer.json()["data"]["result"]
    return result or None


def _wait_for(probe: Callable[[], Any], process: subprocess.Popen[bytes]) -> Any:
    """What `probe` answers once it answers (Prometheus starts, then scrapes each second);
    the limit only names a Prometheus that never gets there."""
    hung = time.monotonic() + 120
    while time.monotonic() < hung:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            found = probe()
        except httpx.HTTPError:
            found = None
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("Prometheus did not scrape the workbench within two minutes")

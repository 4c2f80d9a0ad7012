"""The operator's files (deploy/observability, docker-compose.monitoring.yml): alerting
rules Prometheus accepts (Debian's promtool), a Grafana dashboard whose panels query
Prometheus, and the compose wiring; the metrics they use are checked against a real
scrape in tests/api/test_metrics.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
OBSERVABILITY = ROOT / "deploy" / "observability"
ALERTS_FILE = OBSERVABILITY / "alerts.yml"
DASHBOARD_FILE = OBSERVABILITY / "grafana" / "workbench.json"
METRIC = re.compile(r"\bworkbench_[a-z0-9_]+")


def alerts() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS_FILE.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def dashboard() -> dict[str, Any]:
    return dict(json.loads(DASHBOARD_FILE.read_text()))


def queries() -> list[str]:
    """Every PromQL expression of the rules and the dashboard (its variables' included)."""
    found = [str(rule["expr"]) for rule in alerts()]
    for panel in dashboard()["panels"]:
        found += [target["expr"] for target in panel.get("targets", [])]
    for variable in dashboard()["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            found.append(query["query"])
    return found


def used_metrics() -> set[str]:
    """The workbench_ series the rules and the dashboard read."""
    return {name for query in queries() for name in METRIC.findall(query)}


def needed_tool(name: str) -> str:
    """A program the test runs: .ci/run installs it; missing, the test fails (never skips)."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: apt-get install prometheus (.ci/run does)")
    return path


def test_the_alerts_cover_what_an_operator_is_paged_for() -> None:
    rules = {rule["alert"]: rule for rule in alerts()}
    for wanted in (
        "WorkbenchRunsFailing",
        "WorkbenchQueueGrowing",
        "WorkbenchSandboxUnavailable",
        "WorkbenchModelErrors",
        "WorkbenchStepsSlow",
    ):
        assert wanted in rules, wanted
    assert "histogram_quantile(0.95" in rules["WorkbenchStepsSlow"]["expr"]
    for name, rule in rules.items():
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), name
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name


def test_promtool_accepts_the_rules() -> None:
    promtool = needed_tool("promtool")
    checked = subprocess.run(
        [promtool, "check", "rules", str(ALERTS_FILE)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in checked.stdout


def test_the_dashboard_queries_prometheus_in_every_panel() -> None:
    board = dashboard()
    assert board["uid"] == "workbench"
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    graphs = [panel for panel in board["panels"] if panel["type"] != "row"]
    assert len(graphs) >= 20
    for panel in graphs:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"] and all(METRIC.search(t["expr"]) for t in panel["targets"])
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
    # The families of every part of the issue have a panel.
    used = used_metrics()
    for family in (
        "workbench_http_requests_total",
        "workbench_runs_finished_total",
        "workbench_queue_length",
        "workbench_sandbox_workers",
        "workbench_sandbox_worker_start_seconds_bucket",
        "workbench_sandbox_kills_total",
        "workbench_snapshot_duration_seconds_bucket",
        "workbench_model_calls_total",
        "workbench_model_time_to_first_token_seconds_bucket",
        "workbench_model_tokens_total",
        "workbench_model_cost_usd_total",
        "workbench_db_pool_connections",
        "workbench_redis_pool_connections",
        "workbench_preview_jobs_total",
        "workbench_login_failures_total",
        "workbench_rate_limit_refusals_total",
    ):
        assert family in used, family


def test_the_monitoring_compose_file_mounts_what_is_there() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.monitoring.yml").read_text())
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), (name, port)
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), (name, source)
    scrape = yaml.safe_load((OBSERVABILITY / "prometheus.yml").read_text())
    assert scrape["rule_files"] == ["/etc/prometheus/alerts.yml"]
    job = scrape["scrape_configs"][0]
    assert job["job_name"] == "workbench"  # the rules' `up{job="workbench"}`
    assert job["dns_sd_configs"][0] == {
        "names": ["backend"],
        "type": "A",
        "port": 8000,
        "refresh_interval": "30s",
    }

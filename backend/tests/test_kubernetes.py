"""The Kubernetes deployment (deploy/kubernetes), checked statically: no cluster runs here.

Every manifest is validated against the Kubernetes API's own schemas (the
kubernetes-validate package, strict: unknown fields fail), every kustomization's files
exist, and what the deployment promises is read from the manifests themselves: probes and
limits on every container, the sandbox with no secret, scaling and disruption rules that
select the backend's pods, settings that are real settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from app.config import Settings

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.33"
SECRET_SETTINGS = {
    "DATABASE_URL",
    "REDIS_URL",
    "S3_ENDPOINT",
    "S3_ACCESS_KEY",
    "S3_SECRET_KEY",
    "SECRET_KEY",
    "ADMIN_EMAIL",
    "ADMIN_PASSWORD",
    "LLM_MODEL",
    "LLM_API_KEY",
    "LLM_API_BASE",
    "LLM_MODELS",
}


def kustomization(folder: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((folder / "kustomization.yaml").read_text()))


def rendered(folder: Path) -> list[dict[str, Any]]:
    """The objects a kustomization names: its resources (folders recursively) and the
    resources of its components."""
    spec = kustomization(folder)
    documents: list[dict[str, Any]] = []
    for entry in spec.get("resources", []) + spec.get("components", []):
        path = (folder / entry).resolve()
        assert path.exists(), f"{folder.name}/kustomization.yaml names a missing {entry}"
        if path.is_dir():
            documents += rendered(path)
        else:
            documents += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return documents


def find(documents: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


ALL = rendered(KUBE / "in-cluster") + rendered(KUBE / "components" / "ingress-nginx")
BASE = rendered(KUBE / "base")
BACKEND = find(BASE, "Deployment", "workbench-backend")
POD = BACKEND["spec"]["template"]["spec"]
CONTAINERS = {c["name"]: c for c in POD["containers"]}


@pytest.mark.parametrize("document", ALL, ids=[f"{d['kind']}/{d['metadata']['name']}" for d in ALL])
def test_every_manifest_is_valid_kubernetes(document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)


def test_the_entry_points_hold_what_the_readme_says() -> None:
    kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in BASE)
    assert kinds == [
        "ConfigMap/workbench-config",
        "Deployment/workbench-backend",
        "HorizontalPodAutoscaler/workbench-backend",
        "PodDisruptionBudget/workbench-backend",
        "Service/workbench",
    ]
    in_cluster = {f"{d['kind']}/{d['metadata']['name']}" for d in ALL}
    assert {
        "StatefulSet/workbench-postgres",
        "Deployment/workbench-redis",
        "StatefulSet/workbench-minio",
        "Ingress/workbench",
    } <= in_cluster


def test_every_container_has_probes_and_resource_limits() -> None:
    workloads = [d for d in ALL if d["kind"] in ("Deployment", "StatefulSet")]
    assert len(workloads) == 4
    for workload in workloads:
        for container in workload["spec"]["template"]["spec"]["containers"]:
            where = f"{workload['metadata']['name']}/{container['name']}"
            assert "readinessProbe" in container and "livenessProbe" in container, where
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), where
            assert "memory" in resources["limits"], where


def test_the_backend_is_probed_on_its_health_endpoints() -> None:
    backend = CONTAINERS["backend"]
    assert backend["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert backend["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert backend["startupProbe"]["httpGet"]["path"] == "/healthz"
    sandbox = CONTAINERS["sandbox"]
    assert "--probe" in sandbox["readinessProbe"]["exec"]["command"]


def test_the_sandbox_gets_no_secret_and_no_kubernetes_credentials() -> None:
    sandbox = CONTAINERS["sandbox"]
    assert "envFrom" not in sandbox
    names = {entry["name"] for entry in sandbox["env"]}
    assert names == {
        "SANDBOX_ISOLATION",
        "SANDBOX_SERVICE_MAX_WORKERS",
        "SANDBOX_FORK_SERVER",
        "LOG_LEVEL",
        "WORKBENCH_SANDBOX_CACHE",
    }
    assert all("valueFrom" not in entry for entry in sandbox["env"])
    assert POD["automountServiceAccountToken"] is False
    mounts = {m["name"] for m in sandbox["volumeMounts"]}
    assert mounts == {"workspaces", "sandbox-socket", "sandbox-tmp"}  # not the backend's data


def test_the_sandbox_is_confined_as_in_docker_compose() -> None:
    context = CONTAINERS["sandbox"]["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"]["drop"] == ["ALL"]
    profile = context["seccompProfile"]
    assert profile["type"] == "Localhost"
    assert (ROOT / "deploy" / "sandbox-seccomp.json").exists()
    assert profile["localhostProfile"] == "workbench-sandbox.json"
    assert POD["securityContext"]["runAsNonRoot"] is True
    assert CONTAINERS["backend"]["securityContext"]["capabilities"]["drop"] == ["ALL"]


def test_each_pod_has_its_own_disk_and_no_shared_volume() -> None:
    """Sessions move between pods through object storage, never through a shared disk."""
    assert all("emptyDir" in volume for volume in POD["volumes"])
    assert not [d for d in BASE if d["kind"] == "PersistentVolumeClaim"]


def test_scaling_and_disruption_rules_select_the_backend() -> None:
    labels = BACKEND["spec"]["template"]["metadata"]["labels"]
    selector = BACKEND["spec"]["selector"]["matchLabels"]
    assert selector.items() <= labels.items()
    budget = find(BASE, "PodDisruptionBudget", "workbench-backend")
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["minAvailable"] == 1
    scaler = find(BASE, "HorizontalPodAutoscaler", "workbench-backend")
    assert scaler["spec"]["scaleTargetRef"]["name"] == "workbench-backend"
    assert scaler["spec"]["minReplicas"] >= 2
    service = find(BASE, "Service", "workbench")
    assert service["spec"]["selector"].items() <= labels.items()


def test_settings_are_real_settings_and_secrets_stay_in_the_secret() -> None:
    config = find(BASE, "ConfigMap", "workbench-config")["data"]
    # LiteLLM reads its own variable; every other key is one of ours.
    ours = set(config) - {"LITELLM_LOCAL_MODEL_COST_MAP"}
    assert ours <= set(Settings.model_fields), ours - set(Settings.model_fields)
    assert not set(config) & SECRET_SETTINGS
    backend = CONTAINERS["backend"]
    sources = [s.get("configMapRef", s.get("secretRef"))["name"] for s in backend["envFrom"]]
    assert sources == ["workbench-config", "workbench-secrets"]
    example = [
        line.split("=", 1)[0]
        for line in (KUBE / "workbench.env.example").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert set(example) - {"POSTGRES_PASSWORD"} <= set(Settings.model_fields)
    assert set(example) >= SECRET_SETTINGS
    # The settings a pod needs to share sessions with the others are all given.
    assert {"DATABASE_URL", "REDIS_URL", "S3_ENDPOINT", "SECRET_KEY"} <= set(example)
    assert config["ENVIRONMENT"] == "production"  # refuses default secrets at start-up


def test_the_backend_runs_no_more_processes_than_its_cpu_limit() -> None:
    config = find(BASE, "ConfigMap", "workbench-config")["data"]
    cpus = CONTAINERS["backend"]["resources"]["limits"]["cpu"]
    assert 1 <= int(config["WEB_CONCURRENCY"]) <= int(cpus), (config["WEB_CONCURRENCY"], cpus)


def test_the_limits_of_the_sandbox_fit_its_workers() -> None:
    config = find(BASE, "ConfigMap", "workbench-config")["data"]
    workers_mb = int(config["SANDBOX_MAX_WORKERS"]) * int(config["SANDBOX_MEMORY_MB"])
    limit = CONTAINERS["sandbox"]["resources"]["limits"]["memory"]
    assert limit.endswith("Gi") and int(limit[:-2]) * 1024 >= workers_mb


def test_prometheus_finds_every_pod_and_the_operator_component_matches() -> None:
    annotations = BACKEND["spec"]["template"]["metadata"]["annotations"]
    port = next(p for p in CONTAINERS["backend"]["ports"] if p["name"] == "http")
    assert annotations == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(port["containerPort"]),
        "prometheus.io/path": "/metrics",
    }
    operator = rendered(KUBE / "components" / "prometheus-operator")
    monitor = find(operator, "ServiceMonitor", "workbench")
    service = find(BASE, "Service", "workbench")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [
        p["name"] for p in service["spec"]["ports"]
    ]
    alerts = yaml.safe_load((ROOT / "deploy" / "observability" / "alerts.yml").read_text())
    assert find(operator, "PrometheusRule", "workbench")["spec"]["groups"] == alerts["groups"]

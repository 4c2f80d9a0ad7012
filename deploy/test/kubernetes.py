"""Every Kubernetes overlay in deploy/, rendered by kustomize and validated strictly.

backend/tests/test_kubernetes.py (in `make test`) validates the manifest files as written;
this renders what `kubectl apply -k` would apply (patches, components, generators applied)
and validates each object of it against the Kubernetes API's schemas (kubernetes-validate,
strict: unknown fields fail). A component is rendered on top of the base.

    KUSTOMIZE="kubectl kustomize" uv run python ../deploy/test/kubernetes.py   (from backend/)
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES_VERSION = os.environ.get("KUBERNETES_VERSION", "1.33")
KUSTOMIZE = shlex.split(os.environ.get("KUSTOMIZE", "kustomize build"))


# The prometheus-operator's custom resources (ServiceMonitor, PrometheusRule): the API's
# schemas do not hold them; backend/tests/test_kubernetes.py checks what they say.
CUSTOM_RESOURCES = {"monitoring.coreos.com/v1"}


def overlays() -> list[tuple[str, Path, str]]:
    """(name, folder, kind) of every kustomization under deploy/."""
    found = []
    for path in sorted(DEPLOY.rglob("kustomization.y*ml")):
        kind = (yaml.safe_load(path.read_text()) or {}).get("kind", "Kustomization")
        found.append((str(path.parent.relative_to(ROOT)), path.parent, kind))
    return found


def render(folder: Path) -> list[dict]:
    done = subprocess.run([*KUSTOMIZE, str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(KUSTOMIZE)} {folder}: {done.stderr.strip()}")
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def main() -> int:
    failures = 0
    base = DEPLOY / "kubernetes" / "base"
    for name, folder, kind in overlays():
        try:
            if kind == "Component":
                with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
                    (Path(tmp) / "kustomization.yaml").write_text(
                        yaml.safe_dump(
                            {
                                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                                "kind": "Kustomization",
                                "resources": [os.path.relpath(base, tmp)],
                                "components": [os.path.relpath(folder, tmp)],
                            }
                        )
                    )
                    documents = render(Path(tmp))
                name += " (on the base)"
            else:
                documents = render(folder)
        except RuntimeError as exc:
            print(f"FAIL {name}: {exc}")
            failures += 1
            continue
        errors = []
        for document in documents:
            if document.get("apiVersion") in CUSTOM_RESOURCES:
                continue
            try:
                kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
            except (
                kubernetes_validate.ValidationError,
                kubernetes_validate.SchemaNotFoundError,
            ) as exc:
                errors.append(
                    f"{document.get('kind')}/{document.get('metadata', {}).get('name')}: {exc}"
                )
        if errors or not documents:
            failures += 1
            print(f"FAIL {name}: " + ("; ".join(errors) if errors else "renders nothing"))
        else:
            kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in documents)
            print(
                f"ok   {name}: {len(documents)} objects valid for Kubernetes "
                f"{KUBERNETES_VERSION}: {', '.join(kinds)}"
            )
    print(f"{len(overlays()) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

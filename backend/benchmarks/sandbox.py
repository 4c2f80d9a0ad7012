"""Sandbox benchmark: warm step round trips and cold starts of real workers.

Prints median and p90 of:
- a warm trivial step (backend call -> worker -> back), target <= 10 ms;
- a warm step that imports pandas, numpy and scipy.stats again (the safe-module cache);
- a cold start: spawn + imports + first trivial step, target <= 1.5 s.

    cd backend && uv run python -m benchmarks.sandbox [--warm 200] [--cold 5]
        [--mode local|forked|service|none|all]

Modes: "local" (workers started by this process under bubblewrap and the system-call
filter, each a new Python), "forked" (the same isolation, workers forked by the fork
server, as `make run` does), "service" (the same workers started by a separate
`python -m app.sandbox.service` process over its Unix socket, as docker compose does), and
"none" (SANDBOX_ISOLATION=none: limits and the filter only). The default runs all four.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from app.sandbox import LocalLauncher, SandboxWorker, WorkerLauncher, prepare_sandbox
from tests.support.sandbox_service import SandboxServiceProcess

WARM_TARGET_MS = 10.0
COLD_TARGET_MS = 1500.0
IMPORTS = "import pandas as pd\nimport numpy as np\nimport scipy.stats as stats\n"


def percentile(samples: list[float], fraction: float) -> float:
    """The value below which `fraction` of the samples lie (nearest rank)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def report(label: str, samples_ms: list[float], target_ms: float | None = None) -> None:
    """Print median and p90 of a series (and whether the median meets its target)."""
    median = statistics.median(samples_ms)
    verdict = ""
    if target_ms is not None:
        verdict = f"  target <= {target_ms:g} ms: {'ok' if median <= target_ms else 'MISSED'}"
    print(
        f"{label:<42} median {median:8.1f} ms   p90 {percentile(samples_ms, 0.9):8.1f} ms"
        f"   (n={len(samples_ms)}){verdict}"
    )


def time_ms(action: Callable[[], object]) -> float:
    """Wall-clock milliseconds of one call."""
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def checked(worker: SandboxWorker, code: str) -> None:
    """Run a step that must succeed."""
    result = worker.run(code)
    if result.error is not None:
        raise RuntimeError(result.error)


def measure(
    label: str, launcher: WorkerLauncher, workspace: Path, warm_n: int, cold_n: int
) -> None:
    """Time cold starts and warm steps of workers from one launcher, and print the figures."""
    started = time.perf_counter()
    prepare_sandbox(launcher)
    status = launcher.status()
    if not status.available:
        raise SystemExit(f"{label}: no sandbox: {status.detail}. Fix: {status.fix}")
    print(f"\n[{label}] {status.mechanism} via {status.location}: {status.detail}")
    print(f"probe + runtime cache: {(time.perf_counter() - started) * 1000:.0f} ms (once)")
    with SandboxWorker(workspace, launcher=launcher) as first:
        first_ms = time_ms(lambda: checked(first, "1 + 1"))
    print(f"first start: {first_ms:.0f} ms (once; it starts the fork server where there is one)")
    cold = []
    for _ in range(cold_n):
        worker = SandboxWorker(workspace, launcher=launcher)

        def cold_start(worker: SandboxWorker = worker) -> None:
            worker.start()
            checked(worker, "1 + 1")

        cold.append(time_ms(cold_start))
        worker.close()
    with SandboxWorker(workspace, launcher=launcher) as worker:
        checked(worker, IMPORTS)  # the first import builds the safe-module copies
        for _ in range(10):
            checked(worker, "x = 1")
        warm = [time_ms(lambda: checked(worker, "x = 1")) for _ in range(warm_n)]
        imports = [time_ms(lambda: checked(worker, IMPORTS)) for _ in range(max(1, warm_n // 4))]
    report("warm trivial step", warm, WARM_TARGET_MS)
    report("warm step importing pandas/numpy/scipy", imports)
    report("cold start (spawn + imports + first step)", cold, COLD_TARGET_MS)


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=200, help="warm steps to time")
    parser.add_argument("--cold", type=int, default=5, help="cold starts to time")
    parser.add_argument(
        "--mode", choices=("local", "forked", "service", "none", "all"), default="all"
    )
    args = parser.parse_args()
    modes = ("local", "forked", "service", "none") if args.mode == "all" else (args.mode,)
    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as folder:
        root = Path(folder)
        for mode in modes:
            if mode == "service":
                service = SandboxServiceProcess(root / "service").start()
                try:
                    workspace = service.workspaces / "bench"
                    workspace.mkdir()
                    measure(mode, service.launcher(), workspace, args.warm, args.cold)
                finally:
                    service.stop()
                continue
            if mode == "forked":
                workspace = root / "workspaces" / "bench"
                workspace.mkdir(parents=True)
                launcher = LocalLauncher("required", workspaces=workspace.parent)
                try:
                    measure(mode, launcher, workspace, args.warm, args.cold)
                finally:
                    launcher.close()
                continue
            workspace = root / mode
            workspace.mkdir()
            launcher = LocalLauncher("none" if mode == "none" else "required")
            measure(mode, launcher, workspace, args.warm, args.cold)


if __name__ == "__main__":
    main()

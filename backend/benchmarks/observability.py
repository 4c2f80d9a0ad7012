"""What metrics and traces cost: the same runs against four backends side by side.

Four backends run at once, each its own process on the same kind of stack: one with
metrics off (METRICS_ENABLED=false, no traces), one with metrics (/metrics scraped once a
round, as Prometheus would), one with metrics and traces (OTEL_EXPORTER_OTLP_ENDPOINT at an
OTLP/HTTP sink in this process, which decodes every span it gets). Rounds go to each in
turn, in a rotating order, so that the machine's noise falls on all three alike. Printed:
the backend process's own CPU per run (its sandbox workers are not counted: nothing of
observability runs there), the median over rounds, against the backend with both off.
Target: metrics and traces together <= 3% more backend CPU per run.

Used by `make bench-agent ARGS=--observability` (sequential runs, embedded stack) and
`make bench-load ARGS=--observability` (N runs at once on Postgres, Redis and S3).
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from benchmarks.load import users
from tests.support.otlp import OtlpReceiver
from tests.support.replicas import BackendProcess
from tests.support.services import free_port

MODES = ("off", "metrics", "metrics+traces", "metrics+traces 10%")
TARGET_PERCENT = 3.0
# (url, [(token, project id)]) -> how many runs succeeded.
Workload = Callable[[str, list[tuple[str, str]]], Awaitable[int]]


@dataclass
class Contender:
    mode: str
    replica: BackendProcess
    tokens: list[tuple[str, str]] = field(default_factory=list)
    per_run: list[float] = field(default_factory=list)  # backend CPU seconds a run, per round
    runs: int = 0

    def cpu(self) -> float:
        times = psutil.Process(self.replica.pid).cpu_times()
        return times.user + times.system


def mode_env(mode: str, sink: OtlpReceiver) -> dict[str, str]:
    env = {"METRICS_ENABLED": "false" if mode == "off" else "true"}
    if mode.startswith("metrics+traces"):
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.endpoint
    if mode.endswith("10%"):  # one question in ten traced
        env["OTEL_TRACES_SAMPLER"] = "parentbased_traceidratio"
        env["OTEL_TRACES_SAMPLER_ARG"] = "0.1"
    return env


def compare(
    folder: Path,
    backend_env: Callable[[str], dict[str, str]],
    workload: Workload,
    rounds: int,
    what: str,
) -> None:
    """Run `workload` `rounds` times against each mode's backend and print the CPU a run.

    Args:
        folder: Where the backends keep their data and logs.
        backend_env: The environment of a mode's backend (its database, bucket, …).
        workload: One round's runs.
        rounds: Measured rounds per backend (one more, first, warms each up).
        what: What a round is, for the printout.
    """
    sink = OtlpReceiver().start()
    contenders = []
    for mode in MODES:
        place = folder / mode.replace("+", "-").replace(" ", "-").replace("%", "")
        env = {
            **backend_env(mode),
            **mode_env(mode, sink),
            "PORT": str(free_port()),
            "DATA_DIR": str(place / "data"),
        }
        contenders.append(Contender(mode, BackendProcess(place, env).start()))
    try:
        for contender in contenders:
            contender.replica.wait_ready()
            contender.tokens = users(contender.replica.url)
            asyncio.run(workload(contender.replica.url, contender.tokens))  # warm-up
        for round_ in range(rounds):
            shift = round_ % len(contenders)
            for contender in contenders[shift:] + contenders[:shift]:
                before = contender.cpu()
                runs = asyncio.run(workload(contender.replica.url, contender.tokens))
                if contender.mode != "off":  # what Prometheus' scrape costs, once a round
                    httpx.get(f"{contender.replica.url}/metrics", timeout=30).raise_for_status()
                contender.per_run.append((contender.cpu() - before) / max(1, runs))
                contender.runs += runs
            print(f"  round {round_ + 1}/{rounds} done", flush=True)
    finally:
        for contender in contenders:
            contender.replica.stop()
        sink.stop()
    off = statistics.median(contenders[0].per_run)
    print(f"Backend CPU per run, {what} (median of {rounds} rounds; target: both on <= +3%):")
    for contender in contenders:
        per_run = statistics.median(contender.per_run)
        spread = ", ".join(f"{v * 1000:.1f}" for v in contender.per_run)
        print(
            f"  {contender.mode:<15} {per_run * 1000:7.1f} ms a run  "
            f"({(per_run / off - 1) * 100:+5.1f}% vs off; {contender.runs} runs; "
            f"rounds: {spread} ms)"
        )
    print(f"  spans received by the OTLP sink: {len(sink.spans):,}")

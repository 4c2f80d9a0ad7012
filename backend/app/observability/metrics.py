"""Prometheus metrics: every family the workbench exports, and what records into them.

Names follow Prometheus' conventions: one prefix (`workbench_`), base units (seconds,
bytes, USD), `_total` on counters. Labels take only values from a small fixed set (a route
template, a status, a model offered by LLM_MODELS, a reason named here): never a user, a
session, a run, a path as typed, or anything a sandbox worker says.

Counters and histograms are the process's (every replica and every uvicorn worker serves
its own, and Prometheus adds them up); what describes an app's pools and queues right now
is read from them when `/metrics` is scraped (`AppGauges`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

PREFIX = "workbench"
REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(namespace=PREFIX, registry=REGISTRY)

# Buckets, in seconds or bytes.
QUICK = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
SLOW = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600)
LONG = (1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600)
SIZES = tuple(float(1 << shift) for shift in range(10, 34, 2))  # 1 KiB … 4 GiB

BUILD = Gauge(
    "build_info",
    "The running version (always 1).",
    ["version"],
    namespace=PREFIX,
    registry=REGISTRY,
)

# HTTP ---------------------------------------------------------------------------------
HTTP_REQUESTS = Counter(
    "http_requests",
    "HTTP requests answered, by method, route template and status.",
    ["method", "route", "status"],
    namespace=PREFIX,
    registry=REGISTRY,
)
HTTP_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request (a stream: until it ends), by method and route template.",
    ["method", "route"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=QUICK,
)
LOGIN_FAILURES = Counter(
    "login_failures",
    "Refused logins, by reason (invalid_credentials, account_disabled, rate_limited).",
    ["reason"],
    namespace=PREFIX,
    registry=REGISTRY,
)
RATE_LIMITED = Counter(
    "rate_limit_refusals",
    "Requests refused with 429, by the refusal's code.",
    ["code"],
    namespace=PREFIX,
    registry=REGISTRY,
)

# Runs ---------------------------------------------------------------------------------
RUNS_STARTED = Counter(
    "runs_started",
    "Questions let in (a run made, running or queued).",
    namespace=PREFIX,
    registry=REGISTRY,
)
RUNS_FINISHED = Counter(
    "runs_finished",
    "Runs that ended, by status (succeeded, failed, cancelled).",
    ["status"],
    namespace=PREFIX,
    registry=REGISTRY,
)
RUNS_PAUSED = Counter(
    "runs_paused",
    "Times a run stopped to wait for the user (an answer, or approval of its code).",
    namespace=PREFIX,
    registry=REGISTRY,
)
RUN_DURATION = Histogram(
    "run_duration_seconds",
    "A run's time from its start to its end (waits for the user included), by status.",
    ["status"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=LONG,
)
JOB_RUNS = Counter(
    "job_runs",
    "Job runs that ended, by status (succeeded, failed, skipped).",
    ["status"],
    namespace=PREFIX,
    registry=REGISTRY,
)
JOB_REPAIRS = Counter(
    "job_repairs",
    "Job repairs by what became of them (proposed, failed, applied, rejected).",
    ["status"],
    namespace=PREFIX,
    registry=REGISTRY,
)
JOB_RUN_DURATION = Histogram(
    "job_run_duration_seconds",
    "A job run's time from its start to its end, by status.",
    ["status"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=LONG,
)
QUEUE_WAIT = Histogram(
    "queue_wait_seconds",
    "Time a run waited for a sandbox slot (0 when one was free at once).",
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=(0, *SLOW),
)

# The sandbox --------------------------------------------------------------------------
WORKER_START = Histogram(
    "sandbox_worker_start_seconds",
    "Time for a sandbox worker to start and import its libraries, by how it started "
    "(fork: from the fork server; cold: a new Python; service: by the sandbox service).",
    ["mode"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=QUICK,
)
STEP_DURATION = Histogram(
    "sandbox_step_duration_seconds",
    "Time a code step ran in the sandbox (as the backend saw it).",
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=SLOW,
)
KILLS = Counter(
    "sandbox_kills",
    "Sandbox workers stopped during a step, by reason (timeout, memory, cpu, quota, crash).",
    ["reason"],
    namespace=PREFIX,
    registry=REGISTRY,
)
SNAPSHOT_SECONDS = Histogram(
    "snapshot_duration_seconds",
    "Time to save or restore a session's variables (save, restore: in the worker; upload, "
    "download: to and from object storage; copy: into an attempt's space on this replica; "
    "fork: a question's attempts, from their start until every one's worker holds them).",
    ["operation"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=SLOW,
)
SNAPSHOT_BYTES = Histogram(
    "snapshot_size_bytes",
    "Size of the snapshots stored (upload) and fetched (download).",
    ["operation"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=SIZES,
)

# Model calls --------------------------------------------------------------------------
MODEL_CALLS = Counter(
    "model_calls",
    "Model calls, by model and outcome (ok, error, timeout, rate_limited).",
    ["model", "outcome"],
    namespace=PREFIX,
    registry=REGISTRY,
)
MODEL_DURATION = Histogram(
    "model_call_duration_seconds",
    "Time of a model call from the request to its last token "
    "(OpenTelemetry: gen_ai.client.operation.duration).",
    ["model"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=SLOW,
)
MODEL_FIRST_TOKEN = Histogram(
    "model_time_to_first_token_seconds",
    "Time from a streamed model call's request to its first piece of text.",
    ["model"],
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=SLOW,
)
MODEL_TOKENS = Counter(
    "model_tokens",
    "Tokens of model calls as the model's server counted them, by model and type (input, "
    "output) (OpenTelemetry: gen_ai.client.token.usage).",
    ["model", "type"],
    namespace=PREFIX,
    registry=REGISTRY,
)
MODEL_COST = Counter(
    "model_cost_usd",
    "What model calls cost in USD, by model (LLM_PRICES, else LiteLLM's price list; models "
    "neither prices count nothing).",
    ["model"],
    namespace=PREFIX,
    registry=REGISTRY,
)

# Previews -----------------------------------------------------------------------------
PREVIEW_JOBS = Counter(
    "preview_jobs",
    "Preview jobs (a file read in a child process), by outcome (ok, too_costly, failed, "
    "busy: refused, too many waiting).",
    ["outcome"],
    namespace=PREFIX,
    registry=REGISTRY,
)
PREVIEW_DURATION = Histogram(
    "preview_job_duration_seconds",
    "Time of a preview job, its wait for a slot included.",
    namespace=PREFIX,
    registry=REGISTRY,
    buckets=QUICK,
)

# Job alerts ---------------------------------------------------------------------------
JOB_DELIVERIES = Counter(
    "job_deliveries",
    "Attempts to deliver a job's alert, by channel (email, webhook, share) and outcome (sent; "
    "retrying: failed, tried again later; failed: given up).",
    ["channel", "status"],
    namespace=PREFIX,
    registry=REGISTRY,
)

_starting = 0  # sandbox workers starting in this process (see worker_starting)
_starting_lock = threading.Lock()


@contextlib.contextmanager
def worker_starting() -> Iterator[None]:
    """Counts a sandbox worker as starting while the block runs."""
    global _starting
    with _starting_lock:
        _starting += 1
    try:
        yield
    finally:
        with _starting_lock:
            _starting -= 1


def kill_reason(signal_number: int | None) -> str:
    """Why a worker died during a step, from the signal that ended it (see KILLS)."""
    if signal_number == signal.SIGKILL:
        return "memory"
    return "cpu" if signal_number == signal.SIGXCPU else "crash"


@dataclass
class AppGauges:
    """What one app's pools and queues hold right now, read when `/metrics` is scraped.

    Each reader returns plain numbers; a reader that fails leaves its family out of that
    scrape rather than fail it.
    """

    readers: list[Callable[[], Iterator[GaugeMetricFamily]]] = field(default_factory=list)
    sandbox_available: bool | None = None  # as the last scrape found it

    def collect(self) -> Iterator[Any]:
        for reader in self.readers:
            try:
                families = list(reader())
            except Exception:  # a pool mid-close; the next scrape sees it again
                continue
            yield from families


def gauge(name: str, documentation: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", documentation, labels=labels)


def starting_workers() -> int:
    return _starting


class _Scrape(Collector):
    def __init__(self, extra: AppGauges):
        self.extra = extra

    def collect(self) -> Iterator[Any]:
        yield from REGISTRY.collect()
        yield from self.extra.collect()


def render(extra: AppGauges) -> bytes:
    """The text exposition of the process's metrics and the app's gauges."""
    return generate_latest(_Scrape(extra))  # type: ignore[arg-type]

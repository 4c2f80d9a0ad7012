"""What metrics and traces cost: the same runs against four backends side by side.

Four backends run at once, each its own process on the same kind of stack: one with
metrics off (METRICS_ENABLED=false, no traces), one with metrics (/metrics scraped once a
round, as Prometheus would), one with metrics and traces (OTEL_EXPORTER_OTLP_ENDPOINT at an
OTLP/HTTP sink in this process, which decodes every span it gets). Rounds go to each in
turn, in a rotating order, so that the machine's noise falls on all three alike. Printed:
the backend process's own CPU per run (its sandbox workers are not counted: nothing of
observability runs there), the median over rounds, against the backend with both off.
Target: metrics and traces together <= 3% more backend CPU per run.

The machine's noise (a loaded 2-core machine: +-10% a round) is larger than the target, so
each observed backend is also sampled by py-spy the whole time, and the share of its CPU
samples spent in the code of traces (OpenTelemetry's API and instrumentations, FastAPI's
telemetry, the app's span recorder and tracing.py) and of metrics (prometheus_client, the
app's metrics code) is printed beside the difference: what that code itself costs, not
counting the code it wraps (a request's handler under FastAPI's span, an HTTP request under
httpx's).

Then, where valgrind is installed (`apt-get install valgrind`), the same runs are counted
in instructions: each mode's backend again, alone, under valgrind's callgrind, which counts
every instruction the backend process executes (all its threads: the span exporter's too;
not its sandbox workers) while the measured runs go on. Unlike CPU time, the count does not
depend on what else the machine does: it is the figure to hold against the target. Under
callgrind the sandbox runs without its system-call filter (SANDBOX_ISOLATION=none: valgrind
cannot load one), in every mode alike.

Used by `make bench-agent ARGS=--observability` (sequential runs, embedded stack) and
`make bench-load ARGS=--observability` (N runs at once on Postgres, Redis and S3).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from benchmarks.load import users
from tests.support.otlp import OtlpReceiver, ReceivedSpan
from tests.support.replicas import BackendProcess
from tests.support.services import free_port

# "10%": one question in ten traced; "0%": every instrumentation on, no question recorded
# (what tracing costs before a span is recorded or sent).
MODES = ("off", "metrics", "metrics+traces", "metrics+traces 10%", "metrics+traces 0%")
TARGET_PERCENT = 3.0
# How long a backend counted by callgrind is given, after a round, to send its spans (see
# count_instructions; every mode waits as long).
SEND_WAIT_SECONDS = 15
# How long its timers are counted alone, after a round (see count_instructions).
IDLE_SECONDS = 30
# (url, [(token, project id)]) -> how many runs succeeded.
Workload = Callable[[str, list[tuple[str, str]]], Awaitable[int]]


# Whose code a sampled stack is in (full file names, as py-spy --full-filenames prints them).
TRACES = (
    "/opentelemetry/",
    "/fastapi/telemetry/",
    "app/observability/tracing.py",
    "app/observability/recorder.py",
    "app/observability/otlp.py",
    "app/observability/current.py",
)
# (Not app/observability/model_calls.py: it watches every model call, metrics on or off.)
METRICS = ("/prometheus_client/", "app/observability/metrics.py", "app/api/metrics.py")
# Observability code that wraps the app's (a request's handler under FastAPI's span, an
# HTTP request under httpx's instrumentation): the time of the code it calls, its
# callee's (the next frame, when it is one of these), is the app's own. Everything else
# under observability code is its own work (the exporter's encoding and HTTP request,
# SQLAlchemy's hooks reading the statement, the scrubber's regular expressions).
WRAPPERS = {
    "/fastapi/telemetry/": ("/app/", "/starlette/", "/fastapi/", "/uvicorn/", "/asyncio/"),
    "/opentelemetry/instrumentation/httpx/": ("/httpx/_transports/", "/httpx/_client.py"),
    "app/api/metrics.py": ("/app/", "/starlette/", "/fastapi/", "/uvicorn/", "/asyncio/"),
}
_FRAME_FILE = re.compile(r"\((.*):\d+\)$")


@dataclass
class Contender:
    mode: str
    replica: BackendProcess
    tokens: list[tuple[str, str]] = field(default_factory=list)
    per_run: list[float] = field(default_factory=list)  # backend CPU seconds a run, per round
    runs: int = 0
    profile: Path | None = None  # py-spy's raw samples of this backend
    sampler: subprocess.Popen[bytes] | None = None

    def start_sampling(self, folder: Path) -> None:
        spy = shutil.which("py-spy")
        if spy is None:
            return
        self.profile = folder / f"{self.replica.pid}.samples"
        self.sampler = subprocess.Popen(
            [spy, "record", "--pid", str(self.replica.pid), "--rate", "250", "--threads",
             "--nonblocking", "--full-filenames", "--format", "raw", "--output",
             str(self.profile)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def stop_sampling(self) -> None:
        if self.sampler is not None:
            self.sampler.send_signal(2)  # py-spy writes its file on Ctrl-C
            self.sampler.wait(timeout=60)

    def cpu(self) -> float:
        times = psutil.Process(self.replica.pid).cpu_times()
        return times.user + times.system


def service_name(mode: str) -> str:
    return "workbench-" + re.sub(r"[^a-z0-9]+", "-", mode).strip("-")


def _slug(mode: str) -> str:
    return mode.replace("+", "-").replace(" ", "-").replace("%", "")


def mode_env(mode: str, sink: OtlpReceiver) -> dict[str, str]:
    env = {"METRICS_ENABLED": "false" if mode == "off" else "true"}
    if mode.startswith("metrics+traces"):
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = sink.endpoint
        env["OTEL_SERVICE_NAME"] = service_name(mode)
    if mode.endswith("%"):  # a share of the questions traced
        env["OTEL_TRACES_SAMPLER"] = "parentbased_traceidratio"
        env["OTEL_TRACES_SAMPLER_ARG"] = str(float(mode.rpartition(" ")[2][:-1]) / 100)
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
        place = folder / _slug(mode)
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
            contender.start_sampling(folder)
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
            contender.stop_sampling()
            contender.replica.stop()
    off = statistics.median(contenders[0].per_run)
    print(f"Backend CPU per run, {what} (median of {rounds} rounds; target: both on <= +3%):")
    for contender in contenders:
        per_run = statistics.median(contender.per_run)
        spread = ", ".join(f"{v * 1000:.1f}" for v in contender.per_run)
        print(
            f"  {contender.mode:<18} {per_run * 1000:7.1f} ms a run  "
            f"({(per_run / off - 1) * 100:+5.1f}% vs off; {contender.runs} runs; "
            f"rounds: {spread} ms)"
        )
    print(f"  spans received by the OTLP sink: {len(sink.spans):,}")
    # The spans of the backend that traces every question, per question (its other
    # requests' spans included: logins, new sessions).
    mine = [s for s in sink.spans if s.service == service_name("metrics+traces")]
    questions = sum(1 for s in mine if s.name == "invoke_agent workbench")
    per_question = len(mine) / max(1, questions)
    floor = span_floor()
    print(
        f"  a span's floor: {floor * 1e6:.0f} us (started, ended, scrubbed and "
        f"encoded in this process) x {per_question:.0f} spans a question = "
        f"{floor * per_question * 1000:.1f} ms, {floor * per_question / off:.1%} of a run off"
    )
    profiled = [c for c in contenders if c.profile is not None and c.profile.exists()]
    if not profiled:
        print("  (py-spy not found: no share of CPU by code; `uv sync` installs it)")
    else:
        print("Share of each backend's CPU samples in the code of (py-spy, all its threads):")
    for contender in profiled:
        assert contender.profile is not None
        samples, shares = own_shares(contender.profile, {"traces": TRACES, "metrics": METRICS})
        said = ", ".join(
            f"{name} {share:.2%}" for name, share in shares.items() if share or name == "metrics"
        )
        print(f"  {contender.mode:<18} {said} ({samples:,} samples)")
    try:
        count_instructions(folder, backend_env, workload, what, sink)
    finally:
        sink.stop()


class CallgrindBackend(BackendProcess):
    """A backend run under valgrind's callgrind, counting nothing until `counting()`: the
    instructions of its process, all threads, between then and the end of that block."""

    def __init__(self, folder: Path, env: dict[str, str]):
        super().__init__(folder, env)
        self.read: set[Path] = set()  # the dumps `instructions` has read

    def command(self) -> list[str]:
        out = self.folder / "callgrind.out"
        return ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={out}", *super().command()]  # fmt: skip

    def _control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.pid)], check=True, capture_output=True)

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        self._control("--instr=on")
        try:
            yield
        finally:
            self._control("--dump")
            self._control("--instr=off")

    def instructions(self) -> int:
        """The instructions counted in the last `counting()` (its dump's summary)."""
        for _ in range(100):  # callgrind writes the dump a moment after it is asked
            for dump in sorted(self.folder.glob("callgrind.out.*")):
                if dump in self.read:
                    continue
                # Its totals: a later dump's "summary" line is wrong (it wraps below zero).
                found = re.search(r"^totals: (\d+)", dump.read_text(errors="replace"), re.M)
                if found:
                    self.read.add(dump)
                    return int(found.group(1))
            time.sleep(0.2)
        raise RuntimeError(f"callgrind wrote no new dump in {self.folder}")


def count_instructions(
    folder: Path,
    backend_env: Callable[[str], dict[str, str]],
    workload: Workload,
    what: str,
    sink: OtlpReceiver,
) -> None:
    """Each mode's backend alone under callgrind: the instructions of one round of
    `workload`, after two rounds that warm it up, per run.

    Spans are sent as a busy backend sends them: in full batches. Natively a run takes a
    few tenths of a second, so a 5 s export interval never comes before a batch of 512
    spans has filled; under callgrind, 40 times slower, a timed send would come every run
    or two, each a whole HTTP request for a few dozen spans. So here the interval is an
    hour, and a batch is as many spans as one round makes (counted natively first,
    `spans_a_round`): each round's spans are encoded and sent once, in one request, inside
    that round's count. (The "10%" mode is left out: which questions are traced is chance,
    and so is its batch; its expected figure is worked out from the two others.)

    An idle backend's timers (the sweepers, the event loop's and the sandbox pool's
    wake-ups) cost about 900,000 instructions a second under callgrind, and a round takes
    minutes there: a fifth of the count, more or less with the machine's other load. So
    the backend is also counted idle, for IDLE_SECONDS after the round, and that rate times
    the round's seconds is taken off: what is left is the runs' own work, the same however
    long the round took.
    """
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("(valgrind not found: no instruction counts; `apt-get install valgrind`)")
        return
    print(f"Instructions per run, {what} (callgrind, each backend alone; target: <= +3%):")
    counts: dict[str, float] = {}
    for mode in [m for m in MODES if not m.endswith(" 10%")]:
        place = folder / f"callgrind-{_slug(mode)}"
        env = {
            **backend_env(mode),
            **mode_env(mode, sink),
            "PORT": str(free_port()),
            "DATA_DIR": str(place / "data"),
            "SANDBOX_ISOLATION": "none",  # valgrind cannot load a system-call filter
            # One hash seed for every backend: with random ones, dicts and sets lay out
            # differently from process to process, and so do their instruction counts.
            "PYTHONHASHSEED": "0",
        }
        batch = 0
        if "OTEL_EXPORTER_OTLP_ENDPOINT" in env and not mode.endswith(" 0%"):
            batch = spans_a_round(folder / f"native-{_slug(mode)}", env, workload, sink)
            env["OTEL_BSP_SCHEDULE_DELAY"] = str(3600 * 1000)
            env["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] = str(batch)
        backend = CallgrindBackend(place, env).start()
        try:
            backend.wait_ready()
            tokens = users(backend.url)
            for _ in range(2):  # imports, caches, the first sandbox worker
                asyncio.run(workload(backend.url, tokens))
            before = len(spans_of(sink, service_name(mode)))
            with backend.counting():
                started = time.monotonic()
                runs = asyncio.run(workload(backend.url, tokens))
                # The round's batch is encoded and sent meanwhile (every mode waits alike).
                time.sleep(SEND_WAIT_SECONDS)
                seconds = time.monotonic() - started
            counted = backend.instructions()
            sent = len(spans_of(sink, service_name(mode))) - before
            with backend.counting():  # the backend's timers, alone
                time.sleep(IDLE_SECONDS)
            idle = backend.instructions() / IDLE_SECONDS
        finally:
            backend.stop()
        counts[mode] = max(0.0, counted - idle * seconds) / max(1, runs)
        off = counts[MODES[0]]
        said = f"; {sent} spans sent in one batch of {batch}" if batch else ""
        if batch and abs(sent - batch) > batch // 10:
            said += " (NOT one batch: the figure is off by the difference)"
        print(
            f"  {mode:<18} {counts[mode] / 1e6:8.1f} M instructions a run "
            f"({(counts[mode] / off - 1) * 100:+5.1f}% vs off; {runs} runs{said}; idle "
            f"{idle / 1e3:.0f} k/s x {seconds:.0f} s = {idle * seconds / 1e6:.0f} M taken off)",
            flush=True,
        )
    every, none = counts.get("metrics+traces"), counts.get("metrics+traces 0%")
    if every is not None and none is not None:
        # The cost of none traced plus a tenth of the rest: what one question in ten
        # traced comes to on average.
        expected = none + (every - none) / 10
        print(
            f"  expected at one question in ten: {(expected / counts[MODES[0]] - 1) * 100:+.1f}%"
            " vs off (none recorded + a tenth of every question's extra)"
        )


def spans_a_round(folder: Path, env: dict[str, str], workload: Workload, sink: OtlpReceiver) -> int:
    """How many spans one round of `workload` makes, on a native backend of this mode
    (its second round: the first makes the users' first sessions)."""
    backend = BackendProcess(
        folder,
        {**env, "PORT": str(free_port()), "DATA_DIR": str(folder / "data"),
         "OTEL_BSP_SCHEDULE_DELAY": "100"},
    ).start()  # fmt: skip
    try:
        backend.wait_ready()
        tokens = users(backend.url)
        asyncio.run(workload(backend.url, tokens))
        time.sleep(2)
        before = len(spans_of(sink, env["OTEL_SERVICE_NAME"]))
        asyncio.run(workload(backend.url, tokens))
        time.sleep(2)
        return len(spans_of(sink, env["OTEL_SERVICE_NAME"])) - before
    finally:
        backend.stop()


def spans_of(sink: OtlpReceiver, service: str) -> list[ReceivedSpan]:
    """The spans the sink has received from backends of this service name (a mode's:
    `service_name`)."""
    return [s for s in list(sink.spans) if s.service == service]


def span_floor(count: int = 20_000) -> float:
    """CPU seconds a span costs at the least: a database statement's span (its four
    attributes) started and ended under a question's, scrubbed and encoded into OTLP
    protobuf by the app's recorder (not sent), in this process."""
    from opentelemetry.trace import SpanKind

    from app.observability.recorder import Recorder
    from app.observability.tracing import scrubber

    recorder = Recorder(lambda body: True, {}, scrubber(["a-secret-value-of-the-settings"]))
    recorder.max_queue = count + 10
    tracer = recorder.get_tracer("floor")
    statement = {
        "db.name": "/data/workbench.db",
        "db.statement": "SELECT runs.status FROM runs WHERE runs.session_id = ? AND "
        "runs.status IN (?, ?)",
        "db.system": "sqlite",
        "db.operation": "SELECT",
    }
    best = float("inf")
    for _ in range(3):  # the least of three: the machine's noise only ever adds
        started = time.process_time()
        with tracer.start_as_current_span("POST /query", kind=SpanKind.SERVER):
            for _ in range(count):
                with tracer.start_as_current_span("SELECT", attributes=statement):
                    pass
        recorder.force_flush()
        best = min(best, (time.process_time() - started) / count)
    recorder.shutdown()
    return best


def own_shares(profile: Path, kinds: dict[str, tuple[str, ...]]) -> tuple[int, dict[str, float]]:
    """The share of a py-spy raw profile's samples spent in each kind's own code.

    A sample counts for a kind when it is in that kind's code, or in code it called for
    itself: unless the innermost frame of the kind's code is a wrapper (WRAPPERS) and the
    next frame the code it wraps.
    """
    total = 0
    own: collections.Counter[str] = collections.Counter()
    for line in profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        files = [m.group(1) if (m := _FRAME_FILE.search(f)) else "" for f in stack.split(";")]
        for kind, marks in kinds.items():
            mine = [i for i, f in enumerate(files) if any(m in f for m in marks)]
            if not mine:
                continue
            innermost = files[mine[-1]]
            callee = files[mine[-1] + 1] if mine[-1] + 1 < len(files) else ""
            wraps = next((w for key, w in WRAPPERS.items() if key in innermost), ())
            if not any(w in callee for w in wraps):
                own[kind] += int(count)
    return total, {kind: own[kind] / max(1, total) for kind in kinds}

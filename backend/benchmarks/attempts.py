"""Attempts benchmark (issue 44), through the product: an embedded workbench, the real
sandbox, the scripted model over HTTP. Figures only, no assertions.

- wall time of a question asked with 3 attempts against 1 (target <= 1.3x), side by side
  in one run: with the scripted model answering at once (then a question is all CPU, and
  three attempts on two cores cannot take less than about 1.5x one), and with the model
  taking --latency seconds a call (the case the target is about: attempts run at once);
- forking the session's state into three workers: the session holds a --state-mb
  DataFrame, each attempt's new worker (forked from the fork server) restores the
  session's snapshot, copied into its own folder: a snapshot restore, three at once. The
  figure is the app's own (workbench_snapshot_duration_seconds{operation="fork"}): from the
  attempts' start until every one's worker holds the variables (target <= 1 s);
- the per-question overhead of attempts: 1 against a question that leaves it out (the same
  code path: the figures should agree within noise);
- where the time went, from the app's own metrics (worker starts, the snapshot's copy into
  the spaces or download, restores, saves, uploads), summed over the workers.

    make bench-attempts   (ARGS="--state-mb 200 --repeat 3 --latency 1.5")
    cd backend && uv run python -m benchmarks.attempts [--state-mb 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from app.observability import metrics
from tests.api.attempts_script import FIRST, SECOND, THIRD, responder
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import collect

STEP = code_reply("print(len(big))")
FORK = "fork (attempts' start -> all hold the state)"
# Where a question's time goes (summed over its workers: attempts run at once).
PHASES = {
    "worker start (fork)": (metrics.WORKER_START, ("mode", "fork")),
    "worker start (cold)": (metrics.WORKER_START, ("mode", "cold")),
    "fork (attempts' start -> all hold the state)": (
        metrics.SNAPSHOT_SECONDS,
        ("operation", "fork"),
    ),
    "snapshot copy": (metrics.SNAPSHOT_SECONDS, ("operation", "copy")),
    "snapshot download": (metrics.SNAPSHOT_SECONDS, ("operation", "download")),
    "snapshot restore": (metrics.SNAPSHOT_SECONDS, ("operation", "restore")),
    "snapshot save": (metrics.SNAPSHOT_SECONDS, ("operation", "save")),
    "snapshot upload": (metrics.SNAPSHOT_SECONDS, ("operation", "upload")),
}


def phase_totals() -> dict[str, tuple[float, float]]:
    """Each phase's seconds and count so far, from the app's own metrics (in-process)."""
    totals: dict[str, tuple[float, float]] = {}
    for label, (histogram, (key, value)) in PHASES.items():
        seconds = count = 0.0
        for family in histogram.collect():
            for sample in family.samples:
                if sample.labels.get(key) != value:
                    continue
                if sample.name.endswith("_sum"):
                    seconds += sample.value
                elif sample.name.endswith("_count"):
                    count += sample.value
        totals[label] = (seconds, count)
    return totals


class Delayed:
    """A scripted reply sent after `latency` seconds (a model's time to answer)."""

    def __init__(self, text: str, latency: float) -> None:
        self.text, self.latency = text, latency

    def __call__(self, *_: Any) -> str:
        time.sleep(self.latency)
        return self.text


def ask(api: Api, session_id: str, body: dict[str, Any]) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    with api.stream("POST", f"/sessions/{session_id}/query", json=body) as response:
        events = collect(response)
    return time.perf_counter() - started, events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-mb", type=float, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latency", type=float, default=1.5, help="seconds a model call takes")
    args = parser.parse_args()
    llm = ScriptedLLM().start()
    root = Path(tempfile.mkdtemp(prefix="bench-attempts-"))
    settings = stack_settings(
        "embedded",
        root,
        LLM_API_BASE=llm.api_base,
        LLM_MODELS=["openai/scripted"],
        SANDBOX_STEP_TIMEOUT_SECONDS=120,
        SANDBOX_SNAPSHOT_MB=4096,
        SANDBOX_DISK_MB=8192,
        SANDBOX_MEMORY_MB=2048,
    )
    live = LiveServer(settings).start()
    try:
        with Api(live) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as api:
            project = api.project("Bench")
            session = api.post(f"/projects/{project['id']}/sessions", json={"title": "B"})
            session_id = session.json()["id"]
            rows = int(args.state_mb * 2**20 / 64)
            llm.script(
                code_reply(
                    "import numpy as np\nimport pandas as pd\n"
                    f"big = pd.DataFrame({{f'c{{i}}': np.random.default_rng(7).random({rows}) "
                    "for i in range(8)})\nprint(len(big))"
                ),
                final_reply("len(big)"),
            )
            ask(api, session_id, {"query": "make the state"})
            times: dict[str, list[float]] = {}
            phases: dict[str, dict[str, tuple[float, float]]] = {}
            forks: list[float] = []
            after_attempts: list[float] = []
            for _ in range(args.repeat):
                for latency in (0.0, args.latency):
                    replies = [STEP, final_reply("len(big)")]
                    script = [Delayed(r, latency) if latency else r for r in replies]
                    for label in ("omitted", "1", "3"):
                        body: dict[str, Any] = {"query": "How many rows?"}
                        if label != "omitted":
                            body["attempts"] = int(label)
                        if label == "3":
                            llm.responder = responder(
                                {FIRST: script, SECOND: script, THIRD: script}
                            )
                        else:
                            llm.responder = None
                            llm.script(*script)  # type: ignore[arg-type]
                        before = phase_totals()
                        seconds, events = ask(api, session_id, body)
                        assert events[-1].data["status"] == "succeeded", events[-1].data
                        times.setdefault(f"{label}@{latency}", []).append(seconds)
                        after = phase_totals()
                        if label == "3":
                            forks.append(after[FORK][0] - before[FORK][0])
                            # The session's worker holds older variables than the chosen
                            # attempt's: the next question restarts it from the snapshot.
                            # Timed apart, so that the others all find a warm worker.
                            llm.responder = None
                            llm.script(STEP, final_reply("len(big)"))
                            after_attempts.append(ask(api, session_id, body | {"attempts": 1})[0])
                        phases[label] = {  # the last repeat's
                            k: (after[k][0] - before[k][0], after[k][1] - before[k][1])
                            for k in after
                        }
    finally:
        live.stop()
        llm.stop()
    median = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"state: {args.state_mb:.0f} MB DataFrame; fork method: snapshot restore per attempt "
        "(the session's snapshot copied into each space, restored by a new forked worker); "
        "only the chosen attempt's variables are written at the end"
    )
    print(f"medians of {args.repeat}; a question is one code step and the answer (2 calls)")
    for latency in (0.0, args.latency):
        one, three = median[f"1@{latency}"], median[f"3@{latency}"]
        omitted = median[f"omitted@{latency}"]
        print(f"model latency {latency:.2f} s a call:")
        print(f"  attempts left out {omitted:.2f} s, attempts: 1 {one:.2f} s, 3 {three:.2f} s")
        print(f"  3 attempts / 1: {three / one:.2f}x (target <= 1.3x)")
        print(f"  attempts:1 overhead: {one - omitted:+.2f} s")
    print(
        f"fork of the state into 3 workers: {statistics.median(forks):.2f} s median, "
        f"{max(forks):.2f} s max of {len(forks)} (target <= 1 s)"
    )
    print(
        f"the question after 3 attempts (its worker restarts from the chosen state): "
        f"{statistics.median(after_attempts):.2f} s median (model at once)"
    )
    print("where the time went (last repeat; seconds summed over workers, and how many):")
    for label in ("1", "3"):
        parts = ", ".join(f"{k} {s:.2f} s ({n:.0f})" for k, (s, n) in phases[label].items())
        print(f"  attempts: {label}: {parts}")


if __name__ == "__main__":
    main()

"""Job run benchmark (issue 45), through the product: an embedded workbench, the real
sandbox, the scripted model over HTTP answering each call after --latency seconds (default
1.5 s: a short code reply of a hosted model, first token and generation; the scripted
model itself answers at once).

A two-question analysis ("What is the total revenue?", "Which region earns most?", two
model calls each: a code step and the final answer) is asked in a session and timed; the
session is made into a job (its checks written by the scripted model); then the job runs
--repeat times, each after a new version of the file it reads (a run whose inputs are those
of the last run is skipped, and that is not what is timed). The job's session's worker is
warm already (its checks ran there when the job was made). Figures only:
the job run's time against the two questions' (target <= 0.3x), and, per run, where its
time went (queued -> started -> finished, from the job run's own timestamps).

    make bench-jobs   (ARGS="--repeat 5 --latency 1.5"; also runs bench-jobs-schedule)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.api.jobs_support import CHECKS, QUESTIONS, make_job, run_job
from tests.api.test_query import ask, finished
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

TARGET = 0.3
ASKED = ("What is the total revenue?", "Which region earns most?")


def slow(text: str, latency: float) -> Callable[[list[dict[str, Any]]], str]:
    def reply(_messages: list[dict[str, Any]]) -> str:
        time.sleep(latency)
        return text

    return reply


def sales(version: int) -> bytes:
    rows = [
        f"{region},2026-{m:02d},{1000 + 10 * version + m + (7 if region == 'North' else 0)}"
        for m in range(1, 13)
        for region in ("North", "South")
    ]
    return ("region,month,revenue\n" + "\n".join(rows) + "\n").encode()


def _at(stamp: str | None) -> datetime:
    assert stamp is not None
    return datetime.fromisoformat(stamp)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--latency", type=float, default=1.5)
    args = parser.parse_args()
    llm = ScriptedLLM().start()
    root = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    settings = stack_settings(
        "embedded", root, LLM_API_BASE=llm.api_base, LLM_MODELS=["openai/scripted"]
    )
    live = LiveServer(settings).start()
    runs: list[dict[str, Any]] = []
    walls: list[float] = []
    try:
        with Api(live) as anon, anon.as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as api:
            project = api.project("Bench jobs")
            assert api.upload(project["id"], "sales data.csv", sales(0)).status_code == 201
            session = api.post(f"/projects/{project['id']}/sessions", json={"title": "B"}).json()
            llm.script(*(slow(r, args.latency) for r in (*QUESTIONS, CHECKS)))  # type: ignore[arg-type]
            began = time.perf_counter()
            for question in ASKED:
                assert finished(ask(api, session["id"], question))["status"] == "succeeded"
            questions = time.perf_counter() - began
            job = make_job(api, project["id"], session["id"])
            assert job["checks"]["status"] == "ready", job["checks"]
            asked = len(llm.requests)
            for version in range(1, args.repeat + 1):
                uploaded = api.upload(project["id"], "sales data.csv", sales(version))
                assert uploaded.status_code == 201, uploaded.text
                began = time.perf_counter()
                done = run_job(api, job["id"])
                walls.append(time.perf_counter() - began)
                assert done["status"] == "succeeded", done
                runs.append(done)
            assert len(llm.requests) == asked, "a job run called the model"
    finally:
        live.stop()
        llm.stop()
    median = statistics.median(walls)
    print(f"model latency per call: {args.latency:.2f} s (4 calls for the two questions)")
    print(f"two questions asked:      {questions:.2f} s")
    print(
        f"job run, median of {len(walls)}:   {median:.2f} s "
        f"({median / questions:.2f}x, target <= {TARGET}x; slowest {max(walls):.2f} s)"
    )
    print("per run (s): queued->started, started->finished, request->seen ended")
    for wall, run in zip(walls, runs, strict=True):
        queued = (_at(run["started_at"]) - _at(run["created_at"])).total_seconds()
        ran = (_at(run["finished_at"]) - _at(run["started_at"])).total_seconds()
        print(f"  {queued:6.2f} {ran:6.2f} {wall:6.2f}")


if __name__ == "__main__":
    main()

"""A CSV of `--size-gb` GB (5 by default) answered through the product, on its defaults:
uploaded over HTTP to an embedded workbench whose settings are the product's own (a 2 GB
sandbox worker, a 5 GB workspace quota, the 10 GiB upload limit, two-minute steps, plans and
answer checks on), its preview paged and sorted, then asked about by the scripted model.

Prints, in one run:
- the upload (streamed from disk), its time and what its check found (`check`, `problem`);
- the preview's first page and the first page sorted by price, descending, each timed;
- a question whose step aggregates the file with DuckDB in the worker: the time from the
  POST to `run.finished`, and the step's own time; the totals it printed are checked
  against DuckDB's own on the same file, outside the workbench;
- a question whose step reads the file with pandas: the error the agent is told (target:
  the memory error, which names DuckDB);
- ten new sessions each asking about the file: the time from the POST to the first step's
  start (target: within 1 s; the file is bound read-only into the sandbox, never copied),
  and the disk their workspaces take, with how many copies of the file's bytes the data
  directory holds (target: one, the stored file).

    cd backend && uv run python -m benchmarks.big_upload [--size-gb 5] [--dir /tmp]

The CSV is written by DuckDB in a folder under `--dir`, with the workbench's data
directory (twice the CSV's size at the peak: the file and its stored copy, which the
sessions share); the folder is deleted at the end. The figures are wall-clock seconds: run it on a
quiet machine (it prints the load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The product and the tests are imported inside the functions, not here. The preview's
# child processes (multiprocessing's forkserver) import the main module again each time,
# unless it is a package's `__main__` (as `python -m app` is): importing the app and the test
# helpers there would add seconds of CPU to every preview and upload check measured here (a
# sorted page of 200 MB: 12 s instead of 1.4 s on two busy cores).
if TYPE_CHECKING:
    from app.config import Settings
    from tests.conftest import Api
    from tests.support.llm import ScriptedLLM
    from tests.support.sse import Event

# What the benchmark sets itself: where things are and who the model is. Every other
# setting is the product's default (stack_settings' test values are put back).
WIRING = frozenset(
    {
        "LLM_MODEL",
        "LLM_MODELS",
        "LLM_API_BASE",
        "LLM_API_KEY",
        "DATA_DIR",
        "SECRET_KEY",
        "ADMIN_EMAIL",
        "ADMIN_PASSWORD",
    }
)
SHOWN = (
    "MAX_UPLOAD_BYTES",
    "SANDBOX_MEMORY_MB",
    "SANDBOX_DISK_MB",
    "SANDBOX_STEP_TIMEOUT_SECONDS",
    "AGENT_MAX_STEPS",
    "AGENT_PLANNING_INTERVAL",
    "AGENT_VERIFY_ROUNDS",
    "LLM_TIMEOUT_SECONDS",
)
TOTALS = "SELECT region, count(*) AS n, sum(price) AS total FROM 'big.csv' GROUP BY 1 ORDER BY 1"
DUCKDB_STEP = f'import duckdb\nprint(duckdb.sql("{TOTALS}").df())'
PANDAS_STEP = "import pandas as pd\ndf = pd.read_csv('big.csv')\nprint(len(df))"
SIZE_STEP = "import io\nf = io.open('big.csv', 'rb')\nprint(f.readline()[:30], f.seek(0, 2))"
SESSIONS = 10
PLAN = "1. Sum the prices by region over big.csv.\n2. Answer with the totals.<end_plan>"
APPROVE = json.dumps({"verdict": "approve", "reason": "The answer states what the step printed."})
# Generous: it bounds a hang, not the figures (a 5 GB upload on a busy disk takes minutes).
HTTP_TIMEOUT_SECONDS = 3600


def default_settings(data_dir: Path, llm: ScriptedLLM) -> Settings:
    """The embedded workbench on the product's defaults, but for where it keeps its data,
    the scripted model and the first administrator."""
    from app.config import Settings
    from tests.conftest import stack_settings

    defaults = {
        name: field.get_default(call_default_factory=True)
        for name, field in Settings.model_fields.items()
        if name not in WIRING
    }
    settings = stack_settings("embedded", data_dir, LLM_API_BASE=llm.api_base, **defaults)
    changed = [n for n in defaults if getattr(settings, n) != defaults[n]]
    assert not changed, f"not on the defaults: {changed}"
    return settings


def upload(api: Api, project_id: str, csv: Path) -> tuple[float, dict[str, Any], float]:
    """Stream the file from disk (httpx reads the handle in pieces); the time, the file's
    record, and how much this process's memory (the client and the server in it) grew
    meanwhile, at its peak, in MB."""
    from benchmarks.upload import RssSampler

    with RssSampler(os.getpid()) as rss, csv.open("rb") as handle:
        before = rss.peak
        started = time.perf_counter()
        response = api.post(
            f"/projects/{project_id}/files", files={"file": (csv.name, handle, "text/csv")}
        )
        taken = time.perf_counter() - started
    if response.status_code != 201:
        raise SystemExit(f"upload answered {response.status_code}: {response.text[:2000]}")
    return taken, dict(response.json()), (rss.peak - before) / 1e6


def preview(api: Api, file_id: str, **params: Any) -> tuple[float, dict[str, Any] | str]:
    """The time of a page of the preview, and the page (or, when it failed, what the
    server answered)."""
    started = time.perf_counter()
    response = api.get(f"/files/{file_id}/preview", params=params)
    taken = time.perf_counter() - started
    if response.status_code != 200:
        return taken, f"answered {response.status_code}: {response.text}"
    return taken, dict(response.json())


def ask(api: Api, session_id: str, query: str) -> tuple[list[tuple[float, Event]], float]:
    """Every event of the run with its time from the POST, and the time of run.finished."""
    from tests.support.sse import read_events

    events: list[tuple[float, Event]] = []
    started = time.perf_counter()
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
        if response.status_code != 200:
            raise SystemExit(f"query answered {response.status_code}: {response.read()!r}")
        for event in read_events(response):
            if event is None:
                continue
            events.append((time.perf_counter() - started, event))
            if event.event == "run.finished":
                break
    if not events or events[-1][1].event != "run.finished":
        raise SystemExit(f"the stream ended before run.finished: {[e.event for _, e in events]}")
    return events, events[-1][0]


def of(events: list[tuple[float, Event]], name: str) -> list[dict[str, Any]]:
    return [e.data for _, e in events if e.event == name]


def at(events: list[tuple[float, Event]], name: str, step: int | None = None) -> float | None:
    """When the first `name` event (of that step) arrived, in seconds from the POST."""
    for when, event in events:
        if event.event == name and (step is None or event.data.get("step") == step):
            return when
    return None


def expected_totals(folder: Path) -> list[tuple[str, int, float]]:
    """The totals by DuckDB alone, in this process, on the same file."""
    from benchmarks.sources_files import _duckdb

    con = _duckdb()
    try:
        con.execute(f"SET file_search_path = '{folder}'")
        return [(str(r), int(n), float(t)) for r, n, t in con.sql(TOTALS).fetchall()]
    finally:
        con.close()


def printed_totals(output: str) -> list[tuple[str, int, float]]:
    """The rows of the DataFrame the step printed (index, region, n, total)."""
    rows = []
    for line in output.strip().splitlines()[1:]:
        parts = line.split()
        if len(parts) == 4 and parts[1].startswith("region-"):
            rows.append((parts[1], int(parts[2]), float(parts[3])))
    return rows


def totals_agree(
    printed: list[tuple[str, int, float]], expected: list[tuple[str, int, float]]
) -> bool:
    """Same regions and counts; totals equal to the printed precision (pandas shows 6 decimals,
    or 7 significant digits in scientific notation)."""
    return len(printed) == len(expected) and all(
        p[0] == e[0] and p[1] == e[1] and abs(p[2] - e[2]) <= max(1e-6 * abs(e[2]), 0.01)
        for p, e in zip(printed, expected, strict=True)
    )


def first_steps(api: Api, llm: ScriptedLLM, project: str, size: int) -> list[float]:
    """Ten new sessions ask about the file, one after the other: the time from each POST to
    its first step's start (the workspace made, a worker had, the plan written)."""
    from tests.support.llm import code_reply, final_reply

    times = []
    for number in range(SESSIONS):
        session = api.post(f"/projects/{project}/sessions", json={}).json()["id"]
        llm.script(
            PLAN,
            code_reply(SIZE_STEP, "Look at the file."),
            final_reply("'It is big.'"),
            APPROVE,
        )
        events, _ = ask(api, session, f"How big is big.csv? ({number})")
        started = at(events, "step.started", 1)
        outputs = [o["output"] for o in of(events, "step.output") if o["step"] == 1]
        if started is None or not outputs or str(size) not in outputs[0]:
            raise SystemExit(f"session {number}: the step did not read the file: {outputs}")
        times.append(started)
    return times


def disk_of(data_dir: Path, size: int) -> tuple[int, int]:
    """What the workspaces (and their bookkeeping) take on disk, each inode once, leaving
    out the inodes that the stored files are (the sessions share them); and how many
    distinct inodes in the whole data directory hold `size` bytes (the copies of the file).
    """
    stored: set[int] = set()
    copies: set[int] = set()
    used: dict[int, int] = {}
    for root, _, names in os.walk(data_dir):
        in_workspaces = Path(root).is_relative_to(data_dir / "workspaces")
        for name in names:
            info = (Path(root) / name).lstat()
            if info.st_size == size and not Path(root, name).is_symlink():
                copies.add(info.st_ino)
            if in_workspaces:
                used[info.st_ino] = info.st_blocks * 512
            elif Path(root).is_relative_to(data_dir / "objects"):
                stored.add(info.st_ino)
    return sum(b for inode, b in used.items() if inode not in stored), len(copies)


def _load() -> str:
    """The machine's load average over 1, 5 and 15 minutes (the figures are wall-clock)."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def figure(label: str, value: str) -> None:
    print(f"  {label:<46} {value}")


def main(size_gb: float, where: str | None) -> None:
    import httpx

    from benchmarks.sources_files import seconds, write_files
    from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api
    from tests.support.llm import ScriptedLLM, code_reply, final_reply
    from tests.support.server import LiveServer

    folder = Path(tempfile.mkdtemp(prefix="bench-big-upload-", dir=where))
    llm = ScriptedLLM().start()
    live: LiveServer | None = None
    try:
        taken, rows = seconds(lambda: write_files(folder, size_gb, parquet=False))
        csv = folder / "big.csv"
        size = csv.stat().st_size
        print(f"wrote big.csv: {size / (1 << 30):.2f} GB, {rows:,} rows, in {taken:.0f} s")
        taken, expected = seconds(lambda: expected_totals(folder))
        print(f"DuckDB alone, outside the workbench: the totals by region in {taken:.1f} s")

        print(
            f"load average {_load()} on {os.cpu_count()} cores; this process at nice {os.nice(0)}"
        )
        settings = default_settings(folder / "data", llm)
        print("the workbench's settings (its defaults):")
        for name in SHOWN:
            figure(name, f"{getattr(settings, name)!r}")
        live = LiveServer(settings).start()
        with Api(live) as anonymous:
            api = anonymous.as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
        api.timeout = httpx.Timeout(HTTP_TIMEOUT_SECONDS, connect=30)
        project = api.project("Big file")["id"]

        print("upload (POST /projects/{id}/files, streamed from disk):")
        taken, file, grown = upload(api, project, csv)
        assert file["size"] == size, file
        figure("time", f"{taken:7.1f} s   ({size / 1e6 / taken:,.0f} MB/s)")
        figure("check", f"{file['check']!r}   problem: {file['problem']!r}")
        figure("this process's peak memory grew by", f"{grown:,.0f} MB")

        print("preview (GET /files/{id}/preview):")
        taken, first = preview(api, file["id"])
        if isinstance(first, str):
            figure("first page", f"{taken:7.2f} s   {first}")
        else:
            assert first["row_count"] == rows, (first["row_count"], rows)
            figure("first page", f"{taken:7.2f} s   row_count {first['row_count']:,}")
        taken, ordered = preview(api, file["id"], sort="price", order="desc")
        if isinstance(ordered, str):
            figure("first page sorted by price, descending", f"{taken:7.2f} s   {ordered}")
        else:
            top = ordered["rows"][0]
            assert top[3] == max(row[3] for row in ordered["rows"]), ordered["rows"][:3]
            figure("first page sorted by price, descending", f"{taken:7.2f} s   top row {top}")

        session = api.post(f"/projects/{project}/sessions", json={}).json()["id"]
        print("a question answered with DuckDB (POST /sessions/{id}/query, SSE):")
        llm.script(
            PLAN,
            code_reply(DUCKDB_STEP, "Aggregate the file with DuckDB, out of memory."),
            final_reply("'The totals by region are printed above.'"),
            APPROVE,
        )
        events, total = ask(api, session, "What are the total prices by region?")
        end = of(events, "run.finished")[0]
        figure("POST -> run.finished", f"{total:7.1f} s   status {end['status']}")
        started_step, output_at = at(events, "step.started", 1), at(events, "step.output", 1)
        if started_step is not None:
            figure("POST -> step 1 started (workspace, worker)", f"{started_step:7.1f} s")
        steps = {s["step"]: s for s in of(events, "step.finished")}
        if 1 in steps:
            figure(
                "step 1 (the DuckDB group-by), as the run says",
                f"{steps[1]['duration_ms'] / 1000:7.1f} s",
            )
        errors = of(events, "step.error")
        for error in errors:
            figure(f"step {error['step']} error", error["error"].splitlines()[0][:200])
        outputs = [o["output"] for o in of(events, "step.output") if o["step"] == 1]
        printed = printed_totals(outputs[-1] if outputs else "")
        agree = totals_agree(printed, expected)
        figure("its totals equal DuckDB's own outside", "yes" if agree else "NO")
        print("  what the step printed:")
        for line in (outputs[-1] if outputs else "(nothing)").strip().splitlines():
            print(f"    {line}")
        if not agree:
            print(f"  DuckDB's own: {expected}")
        if output_at is None or end["status"] != "succeeded":
            print(f"  the run: {end}")
        kept = live.call(live.state.storage.list_keys(f"snapshot-chunks/{project}/"))
        figure("the session's variables saved (snapshot)", "yes" if kept else "NO")

        print("a question answered with pandas, same session:")
        llm.script(
            PLAN,
            code_reply(PANDAS_STEP, "Read the file with pandas."),
            final_reply("'pandas could not read it.'"),
            APPROVE,
        )
        events, total = ask(api, session, "How many rows, read with pandas?")
        end = of(events, "run.finished")[0]
        figure("POST -> run.finished", f"{total:7.1f} s   status {end['status']}")
        told = [str(e["error"]) for e in of(events, "step.error") if e["step"] == 1]
        figure(
            "the memory error names DuckDB", "yes" if told and "duckdb.sql(" in told[0] else "NO"
        )
        print("  the error the agent is told:")
        for line in (told[0] if told else "(no error)").splitlines():
            print(f"    {line}")
        print(f"{SESSIONS} new sessions, each a question about the file (its size, first line):")
        times = sorted(first_steps(api, llm, project, size))
        figure("POST -> step 1 started, median", f"{times[len(times) // 2]:7.2f} s")
        figure("POST -> step 1 started, slowest", f"{times[-1]:7.2f} s")
        own, copies = disk_of(settings.DATA_DIR, size)
        figure(f"disk of the {SESSIONS + 1} sessions' workspaces", f"{own / 1e6:9.1f} MB")
        figure("copies of the file's bytes in the data directory", f"{copies}")
        print(f"load average {_load()} at the end")
    finally:
        if live is not None:
            live.stop()
        llm.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=5.0, help="size of the CSV")
    parser.add_argument("--dir", default=None, help="where to write the files (default: /tmp)")
    arguments = parser.parse_args()
    main(arguments.size_gb, arguments.dir)

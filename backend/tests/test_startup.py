"""`python -m app` as a newcomer starts it: it says where it is once, and only when it
listens there; it says plainly when no model is configured; libraries' chatter stays out of
the log; and a first start tells how the sandbox's runtime is coming along."""

from __future__ import annotations

import fcntl
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import app.sandbox.runtime_cache as runtime_cache
from app.sandbox.worker.modules import STARTUP_MODULES, WARM_MODULES
from tests.support.services import free_port

BACKEND = Path(__file__).resolve().parents[1]
READY = "Workbench is ready on"
# Patience for a start that is expected to finish (a guard against hanging, not a timing).
ENDS_WITHIN = 900


def start_env(tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "DATABASE_", "REDIS_"))}
    env.update(
        DATA_DIR=str(tmp_path / "data"),
        PORT=str(port),
        HOST="127.0.0.1",
        LOG_LEVEL="info",
        ADMIN_EMAIL="admin@example.com",
        ADMIN_PASSWORD="admin-password-1",
        SECRET_KEY="startup-test-key-" + "x" * 40,
        S3_ENDPOINT="",
    )
    return env


@contextmanager
def started(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """`python -m app`, its log (stdout and stderr) read line by line; stopped at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=BACKEND,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    guard = threading.Timer(ENDS_WITHIN, process.kill)
    guard.start()
    try:
        yield process
    finally:
        guard.cancel()
        process.terminate()
        process.wait(30)


def read_until(process: subprocess.Popen[str], text: str, lines: list[str]) -> str:
    """Lines up to the one holding `text` (appended to `lines`); the whole log so far."""
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if text in line:
            break
    log = "".join(lines)
    assert text in log, log
    return log


def test_the_url_is_printed_once_the_server_listens(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with started(start_env(tmp_path, port)) as process:
        log = read_until(process, READY, [])
        assert f"{READY} {url}\n" in log, log
        # At the moment the line appears, the port takes connections: no retry needed.
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        assert "NO MODEL CONFIGURED: questions are refused until LLM_MODEL is set" in log
        assert log.index("NO MODEL CONFIGURED") < log.index(READY)
        # The address is said once (not by uvicorn as well), and the libraries keep their
        # INFO lines to themselves: LiteLLM's warm-up call (it used to appear twice),
        # Alembic's migrations.
        assert log.count(url) == 1, log
        assert len(re.findall(r"\bready\b", log, re.IGNORECASE)) == 1, log
        assert "LiteLLM" not in log and "completion()" not in log, log
        assert "alembic" not in log, log


def test_a_first_start_tells_the_sandbox_runtimes_progress_and_waits_for_another_builder(
    tmp_path: Path,
) -> None:
    """An empty runtime cache, whose lock the test holds first (as `make run`'s background
    builder would): the server waits for it, then builds the cache itself, telling its
    progress, and says where it is only after that."""
    port = free_port()
    cache = tmp_path / "cache"
    env = start_env(tmp_path, port) | {runtime_cache.CACHE_ENV: str(cache)}
    compiles = not runtime_cache._runtime_has_bytecode()
    folder = cache / f"runtime-{runtime_cache._cache_key(compiles)}"
    cache.mkdir()
    lock = open(f"{folder}.lock", "a")  # noqa: SIM115 (released halfway through)
    fcntl.flock(lock, fcntl.LOCK_EX)
    lines: list[str] = []
    with started(env) as process:
        read_until(process, "waiting for the runtime cache another process prepares", lines)
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
        log = read_until(process, READY, lines)
    said = [
        "waiting for the runtime cache another process prepares",
        "Sandbox: preparing the runtime cache (",
        *(
            [
                "Sandbox runtime [1/2] importing the libraries: 1 of ",
                "Sandbox runtime [2/2] compiling their packages: ",
            ]
            if compiles
            else []
        ),
        "Sandbox: runtime cache ready (",
        f"{READY} http://127.0.0.1:{port}",
    ]
    where = [log.find(text) for text in said]
    assert -1 not in where and where == sorted(where), log
    assert "first start only" in log
    if compiles:
        # Each phase is told to its end.
        names = STARTUP_MODULES + WARM_MODULES
        assert f"importing the libraries: {len(names)} of {len(names)} ({names[-1]})" in log
        assert re.search(r"compiling their packages: (\d+) of \1 \(", log), log
    assert (folder / runtime_cache.READY_MARKER).exists()

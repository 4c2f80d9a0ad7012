"""The sandbox worker: `python -m app.sandbox.worker`, one process per live analysis session.

It runs inside the isolation built by `isolation.py`, keeps one smolagents
LocalPythonExecutor for its whole life (variables persist across steps) and answers
framed requests on the pipes it was started with (see `protocol.py`):

    backend -> worker: configure (first), run, variables, snapshot, restore, shutdown
    worker -> backend: ready | fatal (once), then result / ok / snapshot / restored / failed

Once configured it splits in two (`supervisor.py`): the code runs in a child that never
holds the channel to the backend.

The executor and what a step shows live in `session.py`.
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import importlib
import os
import re
import signal
import site
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from smolagents import local_python_executor as lpe
from smolagents.local_python_executor import InterpreterError

from app.sandbox.protocol import Message, SeccompFilter, read_message, write_message
from app.sandbox.worker import lockdown
from app.sandbox.worker.capture import OutputCapture
from app.sandbox.worker.lockdown import PR_SET_PDEATHSIG, apply_rlimits, prctl
from app.sandbox.worker.modules import STARTUP_MODULES, WARM_MODULES
from app.sandbox.worker.reads import ReadWatch
from app.sandbox.worker.session import WORKER_NICENESS, WorkerSession, import_startup_modules
from app.sandbox.worker.supervisor import Supervisor, not_dumpable, refusal_notice


def _serve(session: WorkerSession, channel_in: int, channel_out: int) -> int:
    while True:
        message = read_message(channel_in)
        if message is None or message.get("type") == "shutdown":
            return 0
        kind = message.get("type")
        reply: Message
        if kind == "run":
            session.querying.begin(message.get("nonce"))
            answers = message.get("answers")
            reply = session.run(
                str(message["code"]), answers if isinstance(answers, list) else None
            )
        elif kind == "variables":
            session.executor.send_variables(dict(message["values"]))
            reply = {"type": "ok"}
        elif kind == "snapshot":
            reply = _or_failed(functools.partial(session.snapshot, int(message["max_bytes"])))
        elif kind == "restore":
            reply = _or_failed(session.restore)
        else:
            reply = {"type": "failed", "error": f"unknown request {kind!r}"}
        reply["nonce"] = message.get("nonce")  # which request this answers (supervisor.py)
        write_message(channel_out, reply)


def _or_failed(request: Callable[[], Message]) -> Message:
    try:
        return request()
    except Exception as exc:
        return {"type": "failed", "error": f"{type(exc).__name__}: {exc}"[:1000]}


def _prepare_runtime_cache(bytecode: bool) -> int:
    """Trusted, outside any sandbox: import (and so compile) what workers will load.

    Tells its progress on stdout, a line `progress <phase> <done> <total> <name>` per item
    (read by `app/sandbox/runtime_cache.py`)."""
    if bytecode:
        names = STARTUP_MODULES + WARM_MODULES
        for done, name in enumerate(names, 1):
            _progress("import", done, len(names), name)
            try:
                # The safe-module walk imports the submodules smolagents would reach.
                lpe.get_safe_module(importlib.import_module(name), ["*"])
            except Exception as exc:
                print(f"warm-up of {name} failed: {exc}", file=sys.stderr)
    import_startup_modules()  # loaded by now when compiling; a failure to do so is fatal
    if bytecode:
        _compile_libraries()
    return 0


def _compile_libraries() -> None:
    """Compile every module of each installed library loaded so far, not only those
    imported: pandas, scipy & co. import many of theirs on first use (Arrow strings, a
    solver), and a worker cannot write bytecode, so it would compile each from source in
    every session that uses it. Test suites are left out."""
    packages = [Path(p).resolve() for p in site.getsitepackages() if os.path.isdir(p)]
    folders = set()
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if "." in name or not origin or Path(origin).name != "__init__.py":
            continue
        folder = Path(origin).resolve().parent
        if folder.parent in packages:
            folders.add(folder)
    skip = re.compile(r"[/\\]tests?[/\\]")
    for done, folder in enumerate(sorted(folders), 1):
        _progress("compile", done, len(folders), folder.name)
        compileall.compile_dir(folder, quiet=2, rx=skip, workers=0)


def _progress(phase: str, done: int, total: int, name: str) -> None:
    print(f"progress {phase} {done} {total} {name}", flush=True)


def main(argv: list[str]) -> int:
    """Entry point of the worker process.

    Args:
        argv: Command-line arguments; `--prepare-runtime-cache [--bytecode]` builds the
            runtime cache instead of serving.

    Returns:
        The exit status.
    """
    if argv[:1] == ["--prepare-runtime-cache"]:
        return _prepare_runtime_cache("--bytecode" in argv)
    started = time.perf_counter()
    # The protocol moves to private descriptors; fds 0/1/2 become /dev/null and the capture.
    channel_in, channel_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return serve(channel_in, channel_out, started)


def serve(channel_in: int, channel_out: int, started: float) -> int:
    """Configure, import, split into supervisor and runner, lock down and answer requests
    until told to stop (see `supervisor.py` for the split).

    Args:
        channel_in: The descriptor requests arrive on.
        channel_out: The descriptor replies go out on (may be the same socket).
        started: perf_counter() when the worker began (for `startup_ms`).

    Returns:
        The exit status (of the supervisor, or of the runner when it returns).
    """
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    capture = OutputCapture(os.environ.get("WORKBENCH_OUTPUT_DIR") or tempfile.gettempdir())
    config = read_message(channel_in)
    if config is None:
        return 0
    try:
        apply_rlimits(
            memory_mb=int(config.get("process_memory_mb") or config["memory_mb"]),
            cpu_seconds=int(config["cpu_seconds"]),
            file_size_mb=int(config["file_size_mb"]),
            max_processes=int(config["max_processes"]),
            own_user_namespace=bool(config["own_user_namespace"]),
        )
        session = WorkerSession(config, capture)
        rules = SeccompFilter.from_config(config.get("seccomp"))
        requests_in, requests_out = os.pipe()
        replies_in, replies_out = os.pipe()
        # The runner hands the supervisor its filter's listener over this pair.
        handover, handover_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        supervisor_pid = os.getpid()
        runner = os.fork()
    except BaseException:
        write_message(channel_out, {"type": "fatal", "error": traceback.format_exc()})
        return 1
    if runner == 0:
        for fd in {channel_in, channel_out, requests_out, replies_in}:
            os.close(fd)
        handover.close()
        return _run(session, rules, requests_in, replies_out, handover_end, supervisor_pid, started)
    os.close(requests_in)
    os.close(replies_out)
    handover_end.close()
    try:
        not_dumpable()
        listener = None
        if rules is not None:
            lockdown.install(rules.quiet)
            listener = _listener(handover, rules)
    except BaseException:
        os.kill(runner, signal.SIGKILL)
        write_message(channel_out, {"type": "fatal", "error": traceback.format_exc()})
        return 1
    # Opened here, after the fork: the runner (and the code) never holds the watch.
    reads = ReadWatch.start()
    watch = Supervisor(
        runner, requests_out, replies_in, session.output_chars, listener, capture.output_fd, reads
    )
    return watch.serve(channel_in, channel_out)


def _listener(handover: socket.socket, rules: SeccompFilter) -> lockdown.Listener | None:
    """The supervisor's listener of the runner's filter (None: the kernel gave none, or the
    runner ended first: its start-up then says why)."""
    with handover:
        _, fds, _, _ = socket.recv_fds(handover, 1, 1)
    return lockdown.Listener(fds[0], rules.calls) if fds else None


def _run(
    session: WorkerSession,
    rules: SeccompFilter | None,
    requests: int,
    replies: int,
    handover: socket.socket,
    supervisor: int,
    started: float,
) -> int:
    """The runner: lock down, say ready, then run what the supervisor passes on."""
    try:
        _die_with(supervisor)
        _report_refusals(replies)
        # Last, once the libraries are loaded and before any code is read: no new process,
        # no program, no network socket from here on, for this process and all its threads.
        with handover:
            if rules is not None:
                _install_reporting(rules, handover)
    except BaseException:
        write_message(replies, {"type": "fatal", "error": traceback.format_exc()})
        return 1
    write_message(
        replies,
        {
            "type": "ready",
            "startup_ms": round((time.perf_counter() - started) * 1000),
            "startup_output": session.capture.collect(session.output_chars),
        },
    )
    session.querying.attach(requests, replies)
    return _serve(session, requests, replies)


def _install_reporting(rules: SeccompFilter, handover: socket.socket) -> None:
    """Install the reporting program and hand its listener to the supervisor; where the
    kernel has no listeners, the quiet program (refusals then go unreported)."""
    try:
        listener = lockdown.install(rules.reporting, listener=True)
    except lockdown.SeccompUnavailable:
        lockdown.install(rules.quiet)
        handover.sendall(b"-")
        return
    assert listener is not None
    socket.send_fds(handover, [b"+"], [listener])
    os.close(listener)  # only the supervisor may hold it


def _die_with(parent: int) -> None:
    """The runner must not outlive its supervisor (it would be nobody's)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)


# What smolagents' interpreter says when it refuses something (an import, a dunder, a
# builtin): code can catch the InterpreterError, but not the notice sent as it is made.
REFUSALS = (
    "Forbidden access to",
    "Forbidden call to",
    "Import of ",
    "Import from ",
    "Invoking a builtin function",
)


def _report_refusals(replies: int) -> None:
    """Send the supervisor a notice the moment the interpreter refuses something."""
    base_init = ValueError.__init__

    def __init__(self: InterpreterError, *args: Any) -> None:
        base_init(self, *args)
        message = str(args[0]) if args else ""
        if message.startswith(REFUSALS):
            with contextlib.suppress(OSError):
                write_message(replies, refusal_notice(message))

    InterpreterError.__init__ = __init__  # type: ignore[method-assign]

"""The backend's side of a sandbox worker: spawning it, talking to it, the smolagents adapter."""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, get_args

from smolagents.local_python_executor import CodeOutput, PythonExecutor
from smolagents.tools import Tool

from app.sandbox.capture import BOOKKEEPING_DIR
from app.sandbox.interface import (
    DEFAULT_AUTHORIZED_IMPORTS,
    ArtifactFile,
    ArtifactKind,
    SandboxLimits,
    StepResult,
)
from app.sandbox.isolation import build_launch, probe
from app.sandbox.protocol import FrameReader, Message, ProtocolError, write_message
from app.sandbox.runtime_cache import runtime_cache

logger = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 120.0
REQUEST_TIMEOUT_SECONDS = 30.0
SHUTDOWN_GRACE_SECONDS = 2.0
RESTARTED = (
    "the sandbox was restarted and variables from earlier steps are gone — load the data again."
)
STOPPED = "The step was stopped."
ARTIFACT_KINDS = frozenset(get_args(ArtifactKind))


class SandboxError(RuntimeError):
    """The sandbox could not be used at all (for example the worker failed to start)."""


class SandboxStepError(Exception):
    """A step failed; the message is what the agent sees. The full result is attached."""

    def __init__(self, result: StepResult) -> None:
        """Build the message from a failed step.

        Args:
            result: The step's result (its `error` is set).
        """
        message = result.error or "The step failed."
        if result.logs:
            message += f"\n\nExecution logs (printed before the error):\n{result.logs}"
        super().__init__(message)
        self.result = result


def isolation_status() -> dict[str, str]:
    """How analysis code is isolated on this host (probed once, then cached).

    Returns:
        {"mechanism": "bubblewrap" | "rlimits", "detail": a sentence for operators}.
    """
    isolation = probe()
    return {"mechanism": isolation.mechanism, "detail": isolation.detail}


def prepare_sandbox() -> dict[str, str]:
    """Probe the isolation and build the runtime cache now (call it at start-up, in a thread).

    Otherwise the first worker does it: the cache can take tens of seconds on a fresh runtime.

    Returns:
        The same as isolation_status().
    """
    runtime_cache()
    return isolation_status()


class _Spawner:
    """Starts worker processes from one thread that lives as long as the backend.

    bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started
    it exits, not the process: a worker started from a request's or a thread pool's thread
    would die with that thread. The spawner thread ends only with the process, which is
    exactly when workers must go.
    """

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[dict[str, Any], Future[Any]]]
        self._requests = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, **kwargs: Any) -> subprocess.Popen[bytes]:
        """subprocess.Popen(**kwargs), called on the spawner thread."""
        with self._lock:
            # Not alive after a fork of the backend: the child needs a spawner of its own.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, name="sandbox-spawner", daemon=True
                )
                self._thread.start()
        future: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put((kwargs, future))
        return future.result()

    def _serve(self) -> None:
        while True:
            kwargs, future = self._requests.get()
            try:
                future.set_result(subprocess.Popen(**kwargs))
            except BaseException as exc:
                future.set_exception(exc)


_spawner = _Spawner()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    # The worker leads its own session (start_new_session): kill the whole group. With
    # bubblewrap, the sandbox's pid namespace dies with it.
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


class SandboxWorker:
    """One isolated worker process that runs the code steps of one analysis session.

    Thread-safety: run(), start(), close() and set_variables() are serialised; kill() may be
    called from any thread at any time to stop a running step.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        limits: SandboxLimits = SandboxLimits(),
        authorized_imports: Sequence[str] = DEFAULT_AUTHORIZED_IMPORTS,
    ) -> None:
        """Describe a worker; nothing is started until start() or run().

        Args:
            workspace: Host folder with the session's files; the code's working directory.
            limits: Resource limits.
            authorized_imports: Modules the code may import (smolagents' syntax, "x.*").
        """
        self.workspace = Path(workspace).resolve()
        self.limits = limits
        self.authorized_imports = tuple(authorized_imports)
        self.isolation = ""
        self.last_used = time.monotonic()
        self._variables: dict[str, Any] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: FrameReader | None = None
        self._scratch: Path | None = None
        self._stop_requested = False
        self._stderr = ""  # the last worker's stderr (start-up errors, crashes)
        self._lock = threading.RLock()  # serialises requests
        self._state_lock = threading.Lock()  # guards _process/_stop_requested for kill()

    @property
    def alive(self) -> bool:
        """Whether the worker process is running."""
        process = self._process
        return process is not None and process.poll() is None

    def __enter__(self) -> SandboxWorker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        """Spawn the worker and wait until it has imported its libraries. Blocking.

        Raises:
            SandboxError: The worker did not start.
        """
        with self._lock:
            if self.alive:
                return
            self._terminate()
            isolation = probe()
            cache = runtime_cache()
            (self.workspace / BOOKKEEPING_DIR).mkdir(parents=True, exist_ok=True)
            launch = build_launch(
                isolation,
                self.workspace,
                cache.path if cache else None,
                cache.pycache if cache else False,
            )
            try:
                process = _spawner.popen(
                    args=launch.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=launch.env,
                    cwd=launch.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                if launch.scratch is not None:
                    shutil.rmtree(launch.scratch, ignore_errors=True)
                raise SandboxError(f"The sandbox worker could not be spawned: {exc}") from exc
            assert process.stdout is not None
            with self._state_lock:
                self._process = process
            self._scratch = launch.scratch
            self._reader = FrameReader(process.stdout.fileno())
            self.isolation = isolation.mechanism
            configure: Message = {
                "type": "configure",
                "authorized_imports": list(self.authorized_imports),
                "output_chars": self.limits.output_chars,
                "memory_mb": self.limits.memory_mb,
                "cpu_seconds": self.limits.cpu_seconds,
                "file_size_mb": self.limits.file_size_mb,
                "max_processes": self.limits.max_processes,
                "own_user_namespace": isolation.own_user_namespace,
            }
            reply = self._request(configure, START_TIMEOUT_SECONDS)
            if reply is None or reply.get("type") != "ready":
                detail = str(reply.get("error")) if reply else ""
                self._terminate()
                detail = detail or self._stderr or "no message"
                raise SandboxError(f"The sandbox worker did not start: {detail.strip()}")
            logger.debug("Sandbox worker ready in %s ms", reply.get("startup_ms"))
            if self._variables:
                self._send_variables(self._variables)
            self.last_used = time.monotonic()

    def _request(self, message: Message, timeout: float) -> Message | None:
        """Send a request and wait for the reply; None if the worker is gone or too slow."""
        try:
            self._send(message)
            return self._receive(time.monotonic() + timeout)
        except OSError:  # includes TimeoutError
            return None

    def _send(self, message: Message) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise BrokenPipeError("no worker")
        write_message(process.stdin.fileno(), message)

    def _receive(self, deadline: float) -> Message | None:
        """The next reply; None if the worker closed the channel or sent garbage."""
        if self._reader is None:
            return None
        try:
            return self._reader.read(deadline)
        except TimeoutError:
            raise
        except (OSError, ProtocolError):
            return None

    def run(self, code: str) -> StepResult:
        """Run one code step in the worker, starting a fresh worker if none is running.

        Args:
            code: Python code (it runs in smolagents' interpreter inside the sandbox).

        Returns:
            The step's result; timeouts, crashes and kill() are results too.

        Raises:
            SandboxError: A new worker was needed and it did not start.
        """
        with self._lock:
            with self._state_lock:
                self._stop_requested = False
            if not self.alive:
                try:
                    self.start()
                except SandboxError:
                    if self._stop_requested:  # kill() while the worker was starting
                        return self._failure(STOPPED, time.monotonic())
                    raise
            started = time.monotonic()
            self.last_used = started
            try:
                self._send({"type": "run", "code": code})
                reply = self._receive(started + self.limits.step_timeout_seconds)
            except TimeoutError:
                self._terminate()
                seconds = f"{self.limits.step_timeout_seconds:g}"
                return self._failure(
                    f"The code ran for more than {seconds} s and was stopped; {RESTARTED}",
                    started,
                    timed_out=True,
                )
            except OSError:
                reply = None
            finally:
                self.last_used = time.monotonic()
            if reply is None or reply.get("type") != "result":
                returncode = self._terminate()
                if self._stop_requested:
                    return self._failure(STOPPED, started)
                return self._failure(self._crash_message(returncode), started, crashed=True)
            return StepResult(
                output=reply.get("output"),
                is_final_answer=bool(reply.get("is_final_answer")),
                logs=str(reply.get("logs") or ""),
                error=reply.get("error"),
                artifacts=self._artifacts(reply.get("artifacts") or []),
                duration_ms=round((time.monotonic() - started) * 1000),
            )

    def _failure(
        self, error: str, started: float, *, timed_out: bool = False, crashed: bool = False
    ) -> StepResult:
        return StepResult(
            output=None,
            is_final_answer=False,
            logs="",
            error=error,
            artifacts=[],
            duration_ms=round((time.monotonic() - started) * 1000),
            timed_out=timed_out,
            crashed=crashed,
        )

    def _crash_message(self, returncode: int | None) -> str:
        # Popen reports a signal as -N; bubblewrap passes a child's signal on as 128 + N.
        number = None
        if returncode is not None and returncode < 0:
            number = -returncode
        elif returncode is not None and returncode > 128 and self.isolation == "bubblewrap":
            number = returncode - 128
        if number == signal.SIGXCPU:
            return (
                f"The worker used up its CPU time limit ({self.limits.cpu_seconds} s) and was "
                f"stopped; {RESTARTED}"
            )
        if number == signal.SIGKILL:
            return (
                "The sandbox worker was killed, most likely because the step ran out of memory "
                f"(limit {self.limits.memory_mb} MB); {RESTARTED}"
            )
        how = f"signal {signal.Signals(number).name}" if number else f"exit status {returncode}"
        stderr = self._stderr.strip()
        if stderr:
            logger.warning("Sandbox worker crashed (%s): %s", how, stderr[-2000:])
        return f"The sandbox worker crashed ({how}); {RESTARTED}"

    def _artifacts(self, items: list[Any]) -> list[ArtifactFile]:
        """Host-side check of what the worker reported: regular files inside the workspace.

        The worker is not trusted: a path must not lead out of the workspace, through a
        symlink or otherwise, or the backend would upload a host file for it.
        """
        artifacts = []
        for item in items:
            try:
                kind = item["kind"]
                path = self.workspace / str(item["path"])
                info = path.lstat()
                resolved = path.resolve(strict=True)
                valid = (
                    kind in ARTIFACT_KINDS
                    and stat.S_ISREG(info.st_mode)
                    and resolved.is_relative_to(self.workspace)
                )
            except (OSError, KeyError, TypeError, ValueError):
                valid = False
            if not valid:
                logger.warning("Sandbox: ignoring an invalid artifact from the worker: %r", item)
                continue
            artifacts.append(
                ArtifactFile(kind, str(item["name"]), str(item["mime"]), resolved, info.st_size)
            )
        return artifacts

    def set_variables(self, variables: dict[str, Any]) -> None:
        """Define variables in the code's namespace, now and after every worker restart.

        Args:
            variables: JSON-serialisable values by name.

        Raises:
            TypeError: A value is not JSON-serialisable (it could not cross the pipe).
        """
        try:
            json.dumps(variables, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"sandbox variables must be JSON-serialisable: {exc}") from exc
        with self._lock:
            self._variables.update(variables)
            if self.alive and variables:
                self._send_variables(variables)

    def _send_variables(self, variables: dict[str, Any]) -> None:
        reply = self._request({"type": "variables", "values": variables}, REQUEST_TIMEOUT_SECONDS)
        if reply is None or reply.get("type") != "ok":
            self._terminate()
            raise SandboxError(f"The sandbox worker did not take the variables: {reply!r}")

    def kill(self) -> None:
        """Stop the worker now; a run() in progress returns "The step was stopped."."""
        with self._state_lock:
            self._stop_requested = True
            process = self._process
        if process is not None:
            _kill_group(process)
        # Reap here only if no run() is waiting on the worker (it reaps otherwise).
        if self._lock.acquire(blocking=False):
            try:
                self._terminate()
            finally:
                self._lock.release()

    def close(self) -> None:
        """Ask the worker to exit, then make sure it is gone."""
        if not self._lock.acquire(blocking=False):
            self.kill()  # a step is running: stop it
            return
        try:
            process = self._process
            if process is not None and process.poll() is None:
                try:
                    self._send({"type": "shutdown"})
                    process.wait(SHUTDOWN_GRACE_SECONDS)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._terminate()
        finally:
            self._lock.release()

    def _terminate(self) -> int | None:
        """Kill the worker if needed, reap it, release its pipes; returns its exit status."""
        with self._state_lock:
            process, self._process = self._process, None
        self._stderr = ""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if process is None:
            return None
        _kill_group(process)
        returncode = process.wait()
        if process.stderr is not None:
            os.set_blocking(process.stderr.fileno(), False)
            self._stderr = (process.stderr.read(1 << 16) or b"").decode("utf-8", "replace")
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        return returncode


class SandboxExecutor(PythonExecutor):
    """smolagents executor that runs each code action in a SandboxWorker.

    Give it to `CodeAgent(executor=...)`. The backend owns the worker's lifetime.
    """

    def __init__(
        self, worker: SandboxWorker, on_result: Callable[[StepResult], None] | None = None
    ) -> None:
        """Wrap a worker.

        Args:
            worker: The session's worker.
            on_result: Called with every step's result (also failed ones) before the agent
                sees it; the backend records artifacts and output there.
        """
        self.worker = worker
        self.on_result = on_result

    def send_tools(self, tools: dict[str, Tool]) -> None:
        """Accept the agent's tools: only final_answer, which the worker provides itself.

        Args:
            tools: The agent's tools by name.

        Raises:
            ValueError: A tool other than final_answer (tools cannot cross the pipe).
        """
        unsupported = sorted(set(tools) - {"final_answer"})
        if unsupported:
            raise ValueError(
                f"The sandbox cannot provide these tools to the code: {', '.join(unsupported)}"
            )

    def send_variables(self, variables: dict[str, Any]) -> None:
        """Forward JSON-serialisable variables to the code's namespace.

        Args:
            variables: Values by name.

        Raises:
            TypeError: A value is not JSON-serialisable.
        """
        self.worker.set_variables(variables)

    def __call__(self, code_action: str) -> CodeOutput:
        """Run one code action.

        Args:
            code_action: The code the model wrote.

        Returns:
            The output, logs and whether it was the final answer.

        Raises:
            SandboxStepError: The step failed; smolagents shows the message to the model.
        """
        result = self.worker.run(code_action)
        if self.on_result is not None:
            self.on_result(result)
        if result.error is not None:
            raise SandboxStepError(result)
        return CodeOutput(
            output=result.output, logs=result.logs, is_final_answer=result.is_final_answer
        )

    def cleanup(self) -> None:
        """Nothing to do: the backend closes the worker when the session goes idle."""

"""The worker's supervisor: the only part of a worker that holds the channel to the backend.

Analysis code can reach every descriptor of the process it runs in, so it must not run in
the process that talks to the backend. Once its libraries are loaded and before it reads
any code, a worker forks in two:

    supervisor (the worker's own process): holds the backend's channel; not dumpable
      runner (its child): runs the analysis code; speaks to the supervisor over two pipes

The supervisor passes each request on and the runner's reply back, and nothing else:

- a reply must answer the request it follows (`result` for `run`, …) and echo the random
  nonce the supervisor gave that request; anything else, a second reply, a frame over
  `MAX_REPLY_BYTES` or one that is not JSON is a protocol violation: the runner is killed
  and the worker exits with `PROTOCOL_VIOLATION`;
- the runner is stopped (SIGSTOP) the moment its reply has arrived, before the backend
  hears of it, until the next request: no code of a step can go on after its result, and
  whatever it does happens while the backend waits and measures the quota;
- `refused` notices, which the runner sends the moment the interpreter refuses something,
  and the system calls the runner's filter refused (handed to the supervisor's
  `seccomp.Listener`, out of the code's reach) are attached to the step's result, so code
  that catches or ignores a refusal cannot hide it;
- the names of the workspace's files each step read, as the kernel saw them (`reads.py`),
  are attached to its result as `read`;
- text fields are capped before they leave;
- while a step runs, its asks for data (`sql()` & co., see `querying.py`) go to the backend
  if they carry the request's nonce, and the one frame that answers each comes back.

When the runner dies the supervisor ends the same way (the same signal, or the same exit
status), so the backend reads a crash exactly as before.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import secrets
import select
import signal
import time
from collections.abc import Callable
from typing import Any

from app.sandbox.protocol import (
    ANSWERS,
    ASKS,
    MAX_ASK_CHARS,
    MAX_REFUSALS,
    MAX_REPLY_BYTES,
    OUTPUT_EVERY_SECONDS,
    OUTPUT_FRAME_CHARS,
    OUTPUT_STREAM_CHARS,
    PROTOCOL_VIOLATION,
    REFUSAL_CHARS,
    FrameReader,
    Message,
    ProtocolError,
    read_message,
    write_message,
)
from app.sandbox.worker.lockdown import PR_SET_DUMPABLE, Listener, prctl
from app.sandbox.worker.reads import ReadWatch

# What each request may be answered with.
REPLIES: dict[str, frozenset[str]] = {
    "run": frozenset({"result"}),
    "variables": frozenset({"ok"}),
    "snapshot": frozenset({"snapshot", "failed"}),
    "restore": frozenset({"restored", "failed"}),
}
STARTED = frozenset({"ready", "fatal"})


class Violation(Exception):
    """The runner sent something it must not."""


class RunnerEnded(Exception):
    """The runner is gone; `wait_status` says how (os.waitpid's status)."""

    def __init__(self, wait_status: int) -> None:
        super().__init__(wait_status)
        self.wait_status = wait_status


def refusal_notice(what: str) -> Message:
    """The frame a runner sends when the interpreter refuses something (see the module)."""
    return {"type": "refused", "what": what[:REFUSAL_CHARS]}


class _Printed:
    """What a running step printed, read from the runner's output file and sent on every
    OUTPUT_EVERY_SECONDS, in frames of at most OUTPUT_FRAME_CHARS and OUTPUT_STREAM_CHARS
    a step (its result carries all of it, capped). The file starts empty for each step."""

    def __init__(self, fd: int | None, relay: Callable[[Message], None]) -> None:
        self.fd, self.relay = fd, relay
        self.offset = self.sent = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.next = time.monotonic() + OUTPUT_EVERY_SECONDS

    def due(self) -> float | None:
        """Seconds until the next look (None: no more to send; wait for the reply)."""
        if self.fd is None or self.sent >= OUTPUT_STREAM_CHARS:
            return None
        return max(0.0, self.next - time.monotonic())

    def send(self) -> None:
        assert self.fd is not None
        self.next = time.monotonic() + OUTPUT_EVERY_SECONDS
        size = os.fstat(self.fd).st_size
        room = min(OUTPUT_FRAME_CHARS, OUTPUT_STREAM_CHARS - self.sent)
        if size <= self.offset or room <= 0:
            return
        data = os.pread(self.fd, min(size - self.offset, room), self.offset)
        self.offset += len(data)
        text = self.decoder.decode(data)
        if text:
            self.sent += len(text)
            self.relay({"type": "output", "text": text})


class Supervisor:
    """The supervisor's side of one runner."""

    def __init__(
        self,
        runner: int,
        to_runner: int,
        from_runner: int,
        output_chars: int,
        listener: Listener | None = None,
        output_fd: int | None = None,
        reads: ReadWatch | None = None,
    ) -> None:
        """Take charge of a forked runner.

        Args:
            runner: The runner's pid.
            to_runner: The write end of the runner's request pipe.
            from_runner: The read end of the runner's reply pipe.
            output_chars: The cap on each text field of a reply.
            listener: The system calls the runner's filter refused (None: not reported).
            output_fd: The runner's output file.
            reads: The watch on the workspace (None: results carry no `read`).
        """
        self.runner = runner
        self.listener = listener
        self.listening = listener is not None  # until the listener is finished
        self.to_runner = to_runner
        self.from_runner = from_runner
        self.output_chars = output_chars
        self.reader = FrameReader(from_runner, MAX_REPLY_BYTES)
        # The runner's output file: what a running step printed is read from it and sent
        # on as it comes (the runner itself sends nothing but its reply).
        self.output_fd = output_fd
        self.reads = reads

    def serve(self, channel_in: int, channel_out: int) -> int:
        """Relay requests and replies until the backend hangs up or the runner ends.

        Args:
            channel_in: Requests from the backend.
            channel_out: Replies to the backend.

        Returns:
            The worker's exit status (or it ends itself by the runner's signal).
        """
        try:
            started = self._reply(STARTED, [], None)
            if started["type"] == "fatal":
                write_message(channel_out, self._bounded(started))
                return self._end(self._wait())
            self._freeze()
            write_message(channel_out, self._bounded(started))
            while True:
                request = read_message(channel_in)
                if request is None or request.get("type") == "shutdown":
                    self._kill()
                    return 0
                kind = str(request.get("type"))
                nonce = secrets.token_hex(8)
                self._refused_calls()  # none can be due to this request yet
                watch = request.pop("watch", None)
                if kind == "run" and self.reads is not None:
                    self.reads.begin(watch)
                write_message(self.to_runner, {**request, "nonce": nonce})
                os.kill(self.runner, signal.SIGCONT)
                refused: list[str] = []

                def relay(output: Message) -> None:  # what a step prints, as it comes
                    write_message(channel_out, self._bounded(output))

                def ask(message: Message) -> None:  # data the step asks for, and its answer
                    write_message(channel_out, message)
                    answer = read_message(channel_in)
                    if answer is None:
                        raise OSError("the backend hung up")
                    if answer.get("type") not in ANSWERS:
                        raise OSError(f"the backend answered an ask with {answer.get('type')!r}")
                    write_message(self.to_runner, answer)

                reply = self._reply(
                    REPLIES.get(kind, frozenset({"failed"})),
                    refused,
                    nonce,
                    relay if kind == "run" else None,
                    ask if kind == "run" else None,
                )
                # Stopped before the backend hears of the reply: when it measures the
                # workspace, nothing writes to it any more.
                self._freeze()
                if self.listener is not None:
                    # Refused calls of other threads, made before the stop, count too.
                    self.listener.answer_pending()
                if kind == "run":
                    reply["refused"] = (refused + self._refused_calls())[:MAX_REFUSALS]
                    reply.pop("read", None)  # only the supervisor's watch says what was read
                    if self.reads is not None:
                        reply["read"] = self.reads.reads()
                write_message(channel_out, self._bounded(reply))
        except Violation:
            self._kill()
            return PROTOCOL_VIOLATION
        except RunnerEnded as ended:
            return self._end(ended.wait_status)
        except OSError:  # the backend is gone
            self._kill()
            return 0

    def _reply(
        self,
        expected: frozenset[str],
        refused: list[str],
        nonce: str | None,
        relay: Callable[[Message], None] | None = None,
        ask: Callable[[Message], None] | None = None,
    ) -> Message:
        """The runner's reply to the request just sent; refusal notices are gathered, and
        with `relay` (a run) what the step prints is passed on as it comes, within bounds;
        with `ask` (a run) the step's asks for data go to the backend, each answered once.

        The runner echoes each request's nonce: a reply from code (a forged one, or an old
        step's, sent once the code went on) does not carry the request's."""
        printed = _Printed(self.output_fd, relay) if relay is not None else None
        while True:
            if not self.reader.buffered and (printed is not None or self.listening):
                watched = [self.from_runner]
                if self.listening:  # the runner may be blocked in a refused call
                    assert self.listener is not None
                    watched.append(self.listener.fd)
                reads = self.reads if printed is not None else None
                if reads is not None:
                    watched.append(reads.fd)
                timeout = printed.due() if printed is not None else None
                ready = select.select(watched, [], [], timeout)[0]
                if reads is not None and reads.fd in ready:
                    reads.take_events()
                    ready.remove(reads.fd)
                if printed is not None and printed.due() == 0:
                    printed.send()  # a while without a reply: what the step printed so far
                if not ready:
                    continue
                if self.from_runner not in ready:
                    assert self.listener is not None
                    self.listening = self.listener.answer()
                    continue
            try:
                message = self.reader.read(None)
            except ProtocolError as exc:
                raise Violation(str(exc)) from exc
            if message is None:
                raise RunnerEnded(self._wait())
            kind = message.get("type")
            if kind == "refused":
                if len(refused) < MAX_REFUSALS:
                    refused.append(str(message.get("what"))[:REFUSAL_CHARS])
                continue
            if kind in ASKS and ask is not None:
                if message.pop("nonce", None) != nonce:
                    raise Violation("an ask for another request")
                if any(isinstance(v, str) and len(v) > MAX_ASK_CHARS for v in message.values()):
                    raise Violation("an ask longer than it may be")
                ask(message)
                continue
            if kind not in expected:
                raise Violation(f"a {kind!r} frame where {sorted(expected)} was due")
            if message.pop("nonce", None) != nonce:
                raise Violation("a reply to another request")
            return message

    def _refused_calls(self) -> list[str]:
        """The system calls refused since last asked."""
        return self.listener.take() if self.listener is not None else []

    def _freeze(self) -> None:
        """Stop the runner until the next request; anything it sent meanwhile is a
        violation (one reply per request)."""
        os.kill(self.runner, signal.SIGSTOP)
        _, wait_status = os.waitpid(self.runner, os.WUNTRACED)
        if not os.WIFSTOPPED(wait_status):
            raise RunnerEnded(wait_status)
        if self.reader.buffered or select.select([self.from_runner], [], [], 0)[0]:
            raise Violation("a frame nobody asked for")

    def _bounded(self, message: Message) -> Message:
        """The reply with every text field capped (the backend caps them again)."""
        bounded: dict[str, Any] = {}
        for key, value in message.items():
            if isinstance(value, str) and len(value) > self.output_chars:
                value = value[: self.output_chars]
            bounded[key] = value
        return bounded

    def _wait(self) -> int:
        """Wait for the runner to end (it may be stopped: wake it so that it can)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.runner, signal.SIGCONT)
        while True:
            _, wait_status = os.waitpid(self.runner, 0)
            if not os.WIFSTOPPED(wait_status):
                return wait_status

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.runner, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            self._wait()

    def _end(self, wait_status: int) -> int:
        """End as the runner ended: by its signal, or with its exit status."""
        if os.WIFSIGNALED(wait_status):
            number = os.WTERMSIG(wait_status)
            with contextlib.suppress(OSError, ValueError):
                if number != signal.SIGKILL:
                    signal.signal(number, signal.SIG_DFL)
                os.kill(os.getpid(), number)
            return 128 + number
        return os.waitstatus_to_exitcode(wait_status)


def not_dumpable() -> None:
    """Nobody, the runner included, may read or write this process's memory."""
    prctl(PR_SET_DUMPABLE, 0)

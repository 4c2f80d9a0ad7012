"""The bridge between the agent's thread and the event loop.

smolagents is synchronous: the agent runs in a thread of its own, and what it yields (and
what the sandbox reports of each step) crosses to the event loop through a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from smolagents.models import ChatMessageStreamDelta

from app.agent.checking import Verdict
from app.agent.fanout import RepairDone
from app.observability import tracing
from app.sandbox import SandboxWorker, StepResult

CANCEL_POLL_SECONDS = 0.25
CANCEL_GRACE_SECONDS = 10.0
# The model's text pieces that arrive within this long of the first go out as one
# `model.delta`: a browser shows 20 updates a second as smooth as one per token, and each
# event is a Redis write, a read per follower, an SSE frame and a database row.
DELTA_WINDOW_SECONDS = 0.05

# (kind, payload, stamp): what `observe` said of the payload, in the agent's thread.
Entry = tuple[str, Any, Any]
# An entry as queued: with the trace context it was made in (its step's span), if traced.
_Queued = tuple[str, Any, Any, Any]


class AgentThread:
    """Runs the agent's stream in a thread; `entries()` hands its items to the event loop."""

    def __init__(
        self,
        name: str,
        stop: threading.Event,
        failure: Callable[[BaseException], BaseException],
        observe: Callable[[Any], Any],
    ):
        """Args:
        name: The thread's name (benchmarks read it in the agent's log lines).
        stop: Set when the run is to stop: no further model call or code step starts.
        failure: What the event loop is to raise for what ended the agent's thread.
        observe: Called in the agent's thread with each payload as it is handed over; what
            it returns comes with the payload (a run's totals: see budget.Spending).
        """
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self.stop = stop
        self.failure = failure
        self.observe = observe
        # The thread runs in a copy of the run's context: its log ids and its span.
        self.thread = threading.Thread(
            target=contextvars.copy_context().run, args=(self._drive,), name=name, daemon=True
        )
        self._stream: Callable[[], Iterator[Any]] | None = None

    def _put(self, kind: str, payload: Any) -> None:
        entry = (kind, payload, self.observe(payload), tracing.context())
        self.loop.call_soon_threadsafe(self.queue.put_nowait, entry)

    def on_result(self, result: StepResult) -> None:
        """For the sandbox executor: a step's result (output, artifacts)."""
        self._put("result", result)

    def on_output(self, text: str) -> None:
        """For the sandbox executor: what the running step printed, as it comes."""
        self._put("output", text)

    def on_verdict(self, verdict: Verdict) -> None:
        """For the answer check: its verdict."""
        self._put("item", verdict)

    def on_repair(self, done: RepairDone) -> None:
        """For a repair fan-out (app.agent.fanout): what it did."""
        self._put("item", done)

    def start(self, stream: Callable[[], Iterator[Any]]) -> None:
        """Start the thread, which makes the agent's stream with `stream()` and reads it."""
        self._stream = stream
        self.thread.start()

    def _drive(self) -> None:
        assert self._stream is not None
        try:
            stream = self._stream()
            for item in stream:
                if self.stop.is_set():
                    with contextlib.suppress(RuntimeError):
                        # No further model call or code step starts. smolagents yields in
                        # a finally block, which makes close() complain; that is harmless.
                        stream.close()  # type: ignore[attr-defined]
                    break
                self._put("item", item)
            self._put("done", None)
        except BaseException as exc:  # handed to the event loop, which decides
            self._put("error", self.failure(exc))

    async def entries(self, check: Callable[[], None]) -> AsyncIterator[Entry]:
        """("item", what the agent yielded), ("output", what the running step printed so
        far) or ("result", a StepResult), each with its
        stamp (see `observe`), until the agent's stream ends; raises what ended it, if
        anything did. `check()` runs after each entry and at least every
        CANCEL_POLL_SECONDS, and may raise to stop the run. The model's text pieces come
        joined (see DELTA_WINDOW_SECONDS). Each is handled in the trace context it was made
        in (the step's span, with traces on)."""
        held: _Queued | None = None  # taken from the queue while joining text pieces
        while True:
            if held is not None:
                (kind, payload, stamp, made_in), held = held, None
            else:
                try:
                    kind, payload, stamp, made_in = await asyncio.wait_for(
                        self.queue.get(), CANCEL_POLL_SECONDS
                    )
                except TimeoutError:
                    kind, payload, stamp, made_in = "tick", None, None, None
            check()
            if kind == "item" and isinstance(payload, ChatMessageStreamDelta):
                payload, held = await _join_pieces(payload, self.queue, DELTA_WINDOW_SECONDS)
            if kind == "error":  # the agent's own end (its thread is finishing)
                await asyncio.to_thread(self.thread.join, CANCEL_GRACE_SECONDS)
                raise payload
            if kind == "done":
                return
            if kind != "tick":
                with tracing.attached(made_in):
                    yield kind, payload, stamp

    async def halt(self, agent: Any, worker: SandboxWorker) -> None:
        """Stop an agent that is still going: no further step starts, the running code dies."""
        if self.thread.is_alive():
            agent.interrupt()
            await asyncio.to_thread(worker.kill)
            await asyncio.to_thread(self.thread.join, CANCEL_GRACE_SECONDS)


async def _join_pieces(
    delta: ChatMessageStreamDelta, queue: asyncio.Queue[_Queued], window: float
) -> tuple[ChatMessageStreamDelta, _Queued | None]:
    """The model's text pieces that come within `window` seconds of `delta`, joined into one
    `model.delta`; anything else that comes ends the wait (it is handled next, in order).

    A fast model's tokens go out a few at a time instead of one event each; under load, the
    pieces that queued up while the event loop served other runs go out together too.

    Returns:
        The joined piece, and the first entry that was not a piece, if one came.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + window
    texts = [delta.content or ""]
    while True:
        try:
            entry: _Queued | None = queue.get_nowait()
        except asyncio.QueueEmpty:
            left = deadline - loop.time()
            try:
                entry = await asyncio.wait_for(queue.get(), left) if left > 0 else None
            except TimeoutError:
                entry = None
        kind, item = (entry[0], entry[1]) if entry is not None else ("", None)
        if kind != "item" or not isinstance(item, ChatMessageStreamDelta) or item.tool_calls:
            if len(texts) == 1:
                return delta, entry
            return ChatMessageStreamDelta(content="".join(texts)), entry
        texts.append(item.content or "")

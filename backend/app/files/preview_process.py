"""Previews run in a child process that is killed when it takes too long.

Parsing an uploaded file is CPU and memory the uploader controls: a small workbook can
unpack to millions of cells. A thread cannot be stopped, so each preview runs in a child
process with a wall-clock limit (past it the child is killed and the preview answers 422),
a memory limit and a CPU-time limit (which ends the child even if this process dies first).

Children fork from a server process that has already imported pandas and the readers, so
one starts in milliseconds rather than the seconds a fresh interpreter takes. A child does
not import the parent's main module (multiprocessing would, for a program started as a
script or `python -m` other than `python -m app`: a benchmark, a console script, uvicorn's
command; importing the whole app took 10-20 s a preview under load, so that a 24-row CSV
hit the time limit and was "too large to preview"): `_preparation_data`.

The few slots are shared fairly between users: when a slot frees, it goes to the waiting
user who holds the fewest (the longest-waiting first among equals), and the last free slot
is kept for a user who holds none, so one user's heavy files never take every slot and
another's small preview starts at once instead of waiting behind them. Each user may have
only a few previews waiting, and the queue as a whole is bounded: past either, PreviewsBusy
(503 server_busy with Retry-After at the API).
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import resource
import sys
import time
import weakref
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from multiprocessing import spawn
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from app.files.preview import PreviewError, TooCostly
from app.observability import metrics

T = TypeVar("T")

PREVIEW_TIMEOUT_SECONDS = 20.0
# Memory a preview may allocate beyond what the preloaded libraries already hold.
PREVIEW_MEMORY_BYTES = 2 << 30
# Previews computed at once by this process; more wait their turn.
MAX_CONCURRENT_PREVIEWS = 2
# Previews one user may have waiting for a slot, and all users together; more are refused.
MAX_WAITING_PER_USER = 2 * MAX_CONCURRENT_PREVIEWS
MAX_WAITING = 64
# What a refused request is told to wait, in seconds.
BUSY_RETRY_AFTER_SECONDS = 5
# Threads (pyarrow reads with several) may spend more CPU time than wall-clock time; this
# only ends a child whose parent died before it could kill it.
_CPU_SECONDS_PER_WALL_SECOND = 4

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(["app.files.preview_server"])
# The name of a preview child (multiprocessing gives it to the preparation below).
_CHILD_NAME = "workbench-preview"
_parent_preparation = spawn.get_preparation_data


def _preparation_data(name: str) -> dict[str, Any]:
    """What a new child is prepared with: a preview child's without the parent's main module
    (what it runs is imported by module name; the main module may import the whole app)."""
    data: dict[str, Any] = _parent_preparation(name)
    if name == _CHILD_NAME:
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
    return data


spawn.get_preparation_data = _preparation_data  # read by popen_forkserver at each start
# Whose preview this is (set by the API around a request's work); None: nobody's in particular.
_owner: ContextVar[str | None] = ContextVar("preview_owner", default=None)


class PreviewsBusy(PreviewError):
    """Too many previews are waiting (this user's, or everyone's): try again shortly."""

    code = "server_busy"
    retry_after = BUSY_RETRY_AFTER_SECONDS


@contextmanager
def preview_owner(owner: str) -> Iterator[None]:
    """Count the previews run inside this block as `owner`'s (e.g. a user id)."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


class FairSlots:
    """`slots` slots shared between owners: a freed slot goes to the waiting owner who holds
    the fewest, the one who has waited longest for a turn first among equals; the last free
    slot goes only to an owner who holds none (with more than one slot), so whoever comes
    next finds one free however many one owner asked for.

    Args:
        slots: How many may be held at once.
        max_waiting_per_owner: How many of one owner's may wait; more are refused.
        max_waiting: How many may wait in all; more are refused.
    """

    def __init__(self, slots: int, max_waiting_per_owner: int, max_waiting: int) -> None:
        self.slots = slots
        self.free = slots
        self.max_waiting_per_owner = max_waiting_per_owner
        self.max_waiting = max_waiting
        self.held: Counter[str | None] = Counter()
        # owner -> their waiters in arrival order; owners in the order their turn comes.
        self.waiting: OrderedDict[str | None, deque[asyncio.Future[None]]] = OrderedDict()

    def _waiting_count(self) -> int:
        return sum(len(q) for q in self.waiting.values())

    def _may_take(self, owner: str | None) -> bool:
        return self.free > 1 or self.held[owner] == 0 or self.slots == 1

    async def acquire(self, owner: str | None) -> None:
        """Take a slot for `owner`, waiting for a fair turn.

        Raises:
            PreviewsBusy: The owner's or the whole queue is full.
        """
        if self.free > 0 and not self.waiting and self._may_take(owner):
            self.free -= 1
            self.held[owner] += 1
            return
        queue = self.waiting.get(owner)
        if (queue is not None and len(queue) >= self.max_waiting_per_owner) or (
            self._waiting_count() >= self.max_waiting
        ):
            raise PreviewsBusy(
                "Too many previews are waiting right now; try again in a few seconds."
            )
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(owner, deque()).append(turn)
        self._hand_out()  # a slot kept for those holding none may be this owner's
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release(owner)  # the slot came as the wait was cancelled: pass it on
            else:
                self._forget(owner, turn)
            raise

    def release(self, owner: str | None) -> None:
        """Give back a slot `owner` held; it goes to the next fair turn."""
        self.held[owner] -= 1
        if self.held[owner] <= 0:
            del self.held[owner]
        self.free += 1
        self._hand_out()

    def _hand_out(self) -> None:
        while self.free > 0 and self.waiting:
            chosen = min(self.waiting, key=lambda o: self.held[o])  # first among equals
            if not self._may_take(chosen):
                return  # the last slot waits for an owner who holds none
            queue = self.waiting.pop(chosen)
            turn = queue.popleft()
            if queue:
                self.waiting[chosen] = queue  # to the back of the line of owners
            if turn.done():  # cancelled while waiting
                continue
            self.free -= 1
            self.held[chosen] += 1
            turn.set_result(None)

    def _forget(self, owner: str | None, turn: asyncio.Future[None]) -> None:
        queue = self.waiting.get(owner)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self.waiting[owner]


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, FairSlots] = (
    weakref.WeakKeyDictionary()
)


def _slot() -> FairSlots:
    # One set of slots per event loop: asyncio futures belong to the loop that uses them.
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = FairSlots(MAX_CONCURRENT_PREVIEWS, MAX_WAITING_PER_USER, MAX_WAITING)
    return slots


@contextmanager
def _counted() -> Iterator[None]:
    """Count a preview job by its outcome, and time it (waiting for its slot included)."""
    started = time.perf_counter()
    outcome = "failed"
    try:
        yield
        outcome = "ok"
    except PreviewsBusy:
        outcome = "busy"
        raise
    except TooCostly:
        outcome = "too_costly"
        raise
    finally:
        metrics.PREVIEW_JOBS.labels(outcome).inc()
        if outcome != "busy":
            metrics.PREVIEW_DURATION.observe(time.perf_counter() - started)


@contextmanager
def _holding(slots: FairSlots, owner: str | None) -> Iterator[None]:
    try:
        yield
    finally:
        slots.release(owner)


async def run_preview(
    label: str,
    fn: Callable[..., T],
    /,
    *args: Any,
    time_limit: float = PREVIEW_TIMEOUT_SECONDS,
    memory_bytes: int = PREVIEW_MEMORY_BYTES,
    **kwargs: Any,
) -> T:
    """Run `fn(*args, **kwargs)` in a child process, within time and memory limits.

    Args:
        label: The file's name, for the sentence of a refusal.
        fn: A module-level function (it is imported by name in the child).
        *args: Its positional arguments (pickled).
        time_limit: Wall-clock seconds before the child is killed.
        memory_bytes: Memory the child may allocate.
        **kwargs: Its keyword arguments (pickled).

    Returns:
        What `fn` returned.

    Raises:
        TooCostly: The limit of time or memory was reached ("too large to preview").
        PreviewsBusy: Too many previews wait already (see FairSlots).
        Exception: Whatever `fn` raised.
    """
    with _counted():
        slots, owner = _slot(), _owner.get()
        await slots.acquire(owner)
        with _holding(slots, owner):
            receiver, sender = _context.Pipe(duplex=False)
            child = _context.Process(
                target=_child_main,
                args=(sender, fn, args, kwargs, memory_bytes, time_limit),
                name=_CHILD_NAME,
                daemon=True,
            )
            started = False
            try:
                await asyncio.to_thread(child.start)
                started = True
                sender.close()
                if not await asyncio.to_thread(receiver.poll, time_limit):
                    raise TooCostly(
                        f"{label} is too large or complex to preview: reading it took more than "
                        f"{time_limit:g} seconds. It can still be downloaded and used in questions."
                    )
                try:
                    outcome, value = await asyncio.to_thread(receiver.recv)
                except EOFError:  # the child died without a word (the kernel killed it)
                    outcome, value = "died", None
            finally:
                if started:
                    if child.exitcode is None:
                        child.kill()
                    await asyncio.to_thread(child.join)
                    child.close()
                receiver.close()
                sender.close()
        if outcome == "ok":
            return value  # type: ignore[no-any-return]
        if outcome == "memory":
            raise TooCostly(
                f"{label} is too large to preview: reading it needed more than "
                f"{memory_bytes >> 20:,} MB of memory. It can still be downloaded and used in "
                "questions."
            )
        if outcome == "died":
            raise TooCostly(
                f"{label} could not be previewed: reading it stopped the preview process, most "
                "likely at its memory limit. It can still be downloaded and used in questions."
            )
        raise value


def _child_main(
    conn: Connection,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    memory_bytes: int,
    time_limit: float,
) -> None:
    _limit_resources(memory_bytes, math.ceil(time_limit * _CPU_SECONDS_PER_WALL_SECOND))
    result: tuple[str, Any]
    try:
        result = ("ok", fn(*args, **kwargs))
    except MemoryError:
        result = ("memory", None)
    except Exception as exc:
        result = ("error", exc)
    try:
        conn.send(result)
    except Exception:  # an exception that does not pickle: send what it said
        conn.send(("error", RuntimeError(f"{type(result[1]).__name__}: {result[1]}")))
    conn.close()


def _limit_resources(memory_bytes: int, cpu_seconds: int) -> None:
    if sys.platform != "linux":
        return
    # RLIMIT_DATA, not RLIMIT_AS: thread arenas reserve address space they never use.
    with open("/proc/self/status") as status:
        data_kb = next(int(line.split()[1]) for line in status if line.startswith("VmData:"))
    _lower(resource.RLIMIT_DATA, data_kb * 1024 + memory_bytes)
    _lower(resource.RLIMIT_CPU, cpu_seconds)


def _lower(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))

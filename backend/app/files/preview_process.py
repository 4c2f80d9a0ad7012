"""Previews run in a child process that is killed when it takes too long.

Parsing an uploaded file is CPU and memory the uploader controls: a small workbook can
unpack to millions of cells. A thread cannot be stopped, so each preview runs in a child
process with a wall-clock limit (past it the child is killed and the preview answers 422),
a memory limit and a CPU-time limit (which ends the child even if this process dies first).

Children fork from a server process that has already imported pandas and the readers, so
one starts in milliseconds rather than the seconds a fresh interpreter takes.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import resource
import sys
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from app.files.preview import TooCostly

T = TypeVar("T")

PREVIEW_TIMEOUT_SECONDS = 20.0
# Memory a preview may allocate beyond what the preloaded libraries already hold.
PREVIEW_MEMORY_BYTES = 2 << 30
# Previews computed at once by this process; more wait their turn.
MAX_CONCURRENT_PREVIEWS = 2
# Threads (pyarrow reads with several) may spend more CPU time than wall-clock time; this
# only ends a child whose parent died before it could kill it.
_CPU_SECONDS_PER_WALL_SECOND = 4

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(["app.files.preview_server"])
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _slot() -> asyncio.Semaphore:
    # One semaphore per event loop: an asyncio primitive belongs to the loop that uses it.
    loop = asyncio.get_running_loop()
    slot = _slots.get(loop)
    if slot is None:
        slot = _slots[loop] = asyncio.Semaphore(MAX_CONCURRENT_PREVIEWS)
    return slot


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
        Exception: Whatever `fn` raised.
    """
    async with _slot():
        receiver, sender = _context.Pipe(duplex=False)
        child = _context.Process(
            target=_child_main,
            args=(sender, fn, args, kwargs, memory_bytes, time_limit),
            name="workbench-preview",
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

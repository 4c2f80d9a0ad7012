"""Framing of the messages between the backend and a worker: 4-byte big-endian length + JSON.

The worker keeps the protocol on private file descriptors (duplicates of the pipes it was
started with) and points its fds 1 and 2 at the output capture, so nothing the analysed code
prints can corrupt a frame.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import struct
import time
from dataclasses import dataclass, field
from typing import Any

HEADER = struct.Struct(">I")
# What the backend sends a worker (code, variables) stays below this.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# What a worker sends (capped output and logs, a list of artifacts, a snapshot's report)
# stays far below this. A longer frame is refused from its header, before it is read, so
# that no worker can make the backend buffer and parse hundreds of megabytes.
MAX_REPLY_BYTES = 2 * 1024 * 1024

Message = dict[str, Any]

# The worker's exit status when its runner broke the protocol (the backend says so).
PROTOCOL_VIOLATION = 86
# What a step's result may carry of the refusals its code met: how many, how long each.
MAX_REFUSALS = 10
REFUSAL_CHARS = 300
# What a step's result may carry of the workspace's files its code read (`read`: names,
# see app/sandbox/worker/reads.py), how many and how long each.
MAX_READS = 500
READ_NAME_CHARS = 255
# While a step runs, what it printed so far goes to the backend as "output" frames
# ({"type": "output", "text"}, before the "result"): at most one every
# OUTPUT_EVERY_SECONDS, of at most OUTPUT_FRAME_CHARS, and at most OUTPUT_STREAM_CHARS a
# step (the result carries all of it, capped, in any case).
OUTPUT_EVERY_SECONDS = 1.0
OUTPUT_FRAME_CHARS = 4000
OUTPUT_STREAM_CHARS = 20_000
# While a step runs its code may ask the backend for data (`sql()`, `tables()`,
# `columns()`: see app/sandbox/worker/querying.py): the runner sends an ask carrying the
# step's nonce, the supervisor passes it on and passes back the one frame that answers it,
# nothing else. A query's rows come one frame at a time, each asked for (`query_next`), so
# neither side ever holds more than a frame it has not read yet.
ASKS = frozenset({"query", "query_next", "query_close", "lookup"})
ANSWERS = frozenset({"query_rows", "query_end", "query_error", "lookup_result"})
# Arrow IPC bytes of query rows per frame (base64 in the frame).
QUERY_FRAME_BYTES = 4 << 20
# An ask's own text (the SQL) at the most.
MAX_ASK_CHARS = 100_000


class ProtocolError(RuntimeError):
    """The peer sent something that is not a valid frame."""


def encode(message: Message) -> bytes:
    """Serialise one message as a frame.

    Args:
        message: A JSON-serialisable dict with a "type" key.

    Returns:
        The header and the UTF-8 JSON body.
    """
    # ASCII escapes carry any str, lone surrogates (undecodable file names) included.
    body = json.dumps(message, ensure_ascii=True, allow_nan=False).encode("ascii")
    return HEADER.pack(len(body)) + body


def write_message(fd: int, message: Message) -> None:
    """Write one frame to a blocking file descriptor, all of it.

    Args:
        fd: The descriptor to write to.
        message: The message to send.
    """
    view = memoryview(encode(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _decode(body: bytes) -> Message:
    try:
        message = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # deep nesting: RecursionError
        raise ProtocolError(f"invalid frame body: {type(exc).__name__}") from exc
    if not isinstance(message, dict):
        raise ProtocolError("a frame must hold a JSON object")
    return message


def _check_length(length: int, limit: int = MAX_MESSAGE_BYTES) -> int:
    if length > limit:
        raise ProtocolError(f"frame of {length} bytes is larger than {limit}")
    return length


def read_message(fd: int) -> Message | None:
    """Read one frame from a blocking file descriptor.

    Args:
        fd: The descriptor to read from.

    Returns:
        The message, or None when the peer closed the channel.
    """
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (length,) = HEADER.unpack(header)
    body = _read_exactly(fd, _check_length(length))
    if body is None:
        raise ProtocolError("channel closed in the middle of a frame")
    return _decode(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, size - len(chunks))
        if not chunk:
            if chunks:
                raise ProtocolError("channel closed in the middle of a frame")
            return None
        chunks += chunk
    return bytes(chunks)


class FrameReader:
    """Reads a worker's frames with a deadline (the backend's and the supervisor's side)."""

    def __init__(self, fd: int, max_bytes: int = MAX_REPLY_BYTES) -> None:
        """Wrap a readable pipe or socket.

        Args:
            fd: The read end of the worker's protocol channel.
            max_bytes: The longest frame body accepted (a longer one is a ProtocolError).
        """
        self._fd = fd
        self._max_bytes = max_bytes
        self._buffer = bytearray()
        self._selector = selectors.DefaultSelector()
        self._selector.register(fd, selectors.EVENT_READ)

    def read(self, deadline: float | None) -> Message | None:
        """Wait for the next frame.

        Args:
            deadline: time.monotonic() value after which to give up, or None to wait forever.

        Returns:
            The message, or None when the worker closed the channel (it exited or was killed).

        Raises:
            TimeoutError: The deadline passed before a whole frame arrived.
        """
        while True:
            message = self._take_frame()
            if message is not None:
                return message
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                raise TimeoutError
            if not self._selector.select(timeout):
                continue
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk

    def _take_frame(self) -> Message | None:
        if len(self._buffer) < HEADER.size:
            return None
        (length,) = HEADER.unpack_from(self._buffer)
        end = HEADER.size + _check_length(length, self._max_bytes)
        if len(self._buffer) < end:
            return None
        body = bytes(self._buffer[HEADER.size : end])
        del self._buffer[:end]
        return _decode(body)

    @property
    def buffered(self) -> bool:
        """Whether bytes past the last frame have arrived (the start of another frame)."""
        return bool(self._buffer)

    def close(self) -> None:
        """Release the selector (the pipe itself belongs to the caller)."""
        self._selector.close()


@dataclass(frozen=True)
class SeccompFilter:
    """The system-call filter the host compiled (`app/sandbox/seccomp.py`), as the worker's
    configure message carries it: the quiet and the reporting program, and what each
    reported call is."""

    quiet: bytes
    reporting: bytes
    # Each reported call by its number: what it is ("clone (a new process)") and the error
    # number it answers.
    calls: dict[int, tuple[str, int]] = field(default_factory=dict)

    def to_config(self) -> dict[str, object]:
        """The filter as the worker's configure message carries it."""
        return {
            "quiet": base64.b64encode(self.quiet).decode("ascii"),
            "reporting": base64.b64encode(self.reporting).decode("ascii"),
            "calls": {str(number): list(call) for number, call in self.calls.items()},
        }

    @classmethod
    def from_config(cls, config: object) -> SeccompFilter | None:
        """The filter from a configure message (None: the worker runs without one)."""
        if not isinstance(config, dict):
            return None
        calls = config.get("calls") or {}
        return cls(
            base64.b64decode(config["quiet"]),
            base64.b64decode(config["reporting"]),
            {int(number): (str(label), int(error)) for number, (label, error) in calls.items()},
        )

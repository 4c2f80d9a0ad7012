"""Framing and output capping (pure functions, no worker)."""

from __future__ import annotations

import os
import time

import pytest

from app.sandbox.interface import cap_text
from app.sandbox.protocol import FrameReader, ProtocolError, encode, read_message, write_message


def test_frames_round_trip_over_a_pipe() -> None:
    read_end, write_end = os.pipe()
    try:
        write_message(write_end, {"type": "run", "code": "print('é')"})
        write_message(write_end, {"type": "shutdown"})
        assert read_message(read_end) == {"type": "run", "code": "print('é')"}
        reader = FrameReader(read_end)
        assert reader.read(time.monotonic() + 1) == {"type": "shutdown"}
        with pytest.raises(TimeoutError):
            reader.read(time.monotonic() + 0.05)
        os.close(write_end)
        write_end = -1
        assert reader.read(None) is None  # the peer is gone
        reader.close()
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_a_truncated_frame_is_an_error() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, encode({"type": "result"})[:-2])
    os.close(write_end)
    with pytest.raises(ProtocolError):
        read_message(read_end)
    os.close(read_end)


def test_cap_text_keeps_head_and_tail_within_the_limit() -> None:
    text = "".join(f"{i}\n" for i in range(1000))
    capped = cap_text(text, 200)
    assert len(capped) <= 200
    assert capped.startswith("0\n1\n")
    assert capped.endswith("998\n999\n")
    assert "characters of output cut" in capped
    assert cap_text("short", 200) == "short"

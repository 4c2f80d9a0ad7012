"""A queued run's place in line: how often it waits for its slot, and when it tells its
new place (app.runs.execution sends `run.queued`)."""

from __future__ import annotations

QUEUE_POLL_SECONDS = 0.5
# A queued run tells every change of its place while it is among the next few; further
# back, at most one a few seconds (every grant moves every queued run: told each time, 200
# queued runs would send some 20,000 events).
QUEUE_NEAR_POSITION = 10
QUEUE_ANNOUNCE_SECONDS = 5.0


def tell_position(position: int, announced: int, seconds_since: float) -> bool:
    """Whether a queued run sends its new place in line (see QUEUE_NEAR_POSITION).

    Args:
        position: Its place now (0: granted).
        announced: The place it last sent.
        seconds_since: Seconds since it sent that.
    """
    if position == announced or position <= 0:
        return False
    return position <= QUEUE_NEAR_POSITION or seconds_since >= QUEUE_ANNOUNCE_SECONDS

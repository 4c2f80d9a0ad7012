"""The bound on open live streams: each holds a Redis connection (or a place in memory) for
as long as a browser keeps a session open, so a user, and the process, may hold only so
many; past that a new one is refused with 503 and Retry-After, never queued."""

from __future__ import annotations

import uuid
from collections import Counter

from app.errors import ServiceUnavailable

RETRY_AFTER_SECONDS = 30


class TooManyStreams(ServiceUnavailable):
    code = "too_many_streams"


class StreamSlot:
    """One open stream's place; given back once, however often release() is called."""

    def __init__(self, slots: LiveStreamSlots, user_id: uuid.UUID):
        self._slots, self.user_id = slots, user_id
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots._give_back(self.user_id)


class LiveStreamSlots:
    def __init__(self, per_user: int, per_process: int):
        self.per_user, self.per_process = per_user, per_process
        self._by_user: Counter[uuid.UUID] = Counter()

    @property
    def open(self) -> int:
        return sum(self._by_user.values())

    def take(self, user_id: uuid.UUID) -> StreamSlot:
        """A place for one more stream of `user_id`.

        Raises:
            TooManyStreams: the user, or this process, holds as many as allowed.
        """
        if self._by_user[user_id] >= self.per_user:
            raise TooManyStreams(
                f"You have {self.per_user} sessions open live already; close one (another "
                "tab or window) and try again.",
                retry_after=RETRY_AFTER_SECONDS,
            )
        if self.open >= self.per_process:
            raise TooManyStreams(
                "The server follows as many live sessions as it can; try again shortly.",
                retry_after=RETRY_AFTER_SECONDS,
            )
        self._by_user[user_id] += 1
        return StreamSlot(self, user_id)

    def _give_back(self, user_id: uuid.UUID) -> None:
        self._by_user[user_id] -= 1
        if self._by_user[user_id] <= 0:
            del self._by_user[user_id]

"""The one thread worker processes (and the fork server) are started from."""

from __future__ import annotations

import queue
import subprocess
import threading
from concurrent.futures import Future
from typing import Any


class Spawner:
    """Starts worker processes from one thread that lives as long as the process.

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
            # Not alive after a fork of the process: the child needs a spawner of its own.
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


spawner = Spawner()
